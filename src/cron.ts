/**
 * Cron expressions read in a time zone (croner computes the times): whether one
 * can be used, for the configuration's check, and when it next fires, for the
 * daemon's schedules (watch/schedules.ts). Pure: no clock, no store.
 */
import { Cron } from 'croner';

export interface ScheduleSpec {
  cron: string;
  time_zone: string;
}

/** Why a cron expression or time zone cannot be used, or null when it can. */
export function cronProblem(cron: string, timeZone: string): string | null {
  try {
    new Cron(cron, { timezone: timeZone, paused: true }).nextRun(new Date(0));
    return null;
  } catch (error) {
    const message = (error as Error).message;
    return /timezone/i.test(message) ? `"${timeZone}" is not an IANA time zone (such as Europe/London)` : `"${cron}" is not a cron expression: ${message.replace(/^CronPattern: /, '')}`;
  }
}

/**
 * Null when `zone` is an IANA time zone, else why not. UTC, every default, is answered without asking Intl: its first
 * use of the time-zone data cost about 27 ms of every command's start (docs/performance.md), for a zone always there.
 */
export function timeZoneProblem(zone: string): string | null {
  return zone === 'UTC' ? null : cronProblem('0 0 * * *', zone);
}

/** The first time strictly after `afterMs` the schedule fires, in ms since the epoch. */
export function nextRunAfter(spec: ScheduleSpec, afterMs: number): number | null {
  const next = new Cron(spec.cron, { timezone: spec.time_zone, paused: true }).nextRun(new Date(afterMs));
  return next ? next.getTime() : null;
}
