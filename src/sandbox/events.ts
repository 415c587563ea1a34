/** An event the service publishes after a change is committed [6]. */
export interface ServiceEvent {
  eventType: string;
  objectId: string;
  data: Record<string, unknown>;
}

export interface EventSink {
  /** Whether anyone listens for this event type; events nobody wants are not even built. */
  wants(eventType: string): boolean;
  publish(event: ServiceEvent): void;
}
