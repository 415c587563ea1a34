/** An event the service publishes after a change is committed [6]. */
export interface ServiceEvent {
  eventType: string;
  objectId: string;
  data: Record<string, unknown>;
}

export interface EventSink {
  publish(event: ServiceEvent): void;
}
