/**
 * Ctrl-C during `run`: what was stopped, what is in flight at the service, and
 * that the next run resumes. Said from the store (every step is recorded there
 * before and after its call), then the session lets go and the process ends 130.
 */
import { stageWords } from '../engine/batch-stage.js';
import { readBatchStage } from '../engine/stage-facts.js';
import type { StageStore } from '../engine/stage-facts.js';
import type { PipelineStore } from '../store/port.js';

export async function interruptedWords(store: StageStore & Pick<PipelineStore, 'openBatches'>, doing: string, now: number): Promise<string> {
  const lines = [`stopped by Ctrl-C (SIGINT) while ${doing}.`];
  let atService = 0;
  let sending = 0;
  for (const batch of await store.openBatches()) {
    const { stage, progress } = await readBatchStage(store, batch, now);
    atService += progress.at_service;
    sending += progress.sending;
    lines.push(`  ${batch.id} (${batch.file_name}): ${stageWords(stage)}`);
  }
  if (lines.length === 1) lines.push('  no batch is open.');
  const inFlight = atService > 0 ? `${atService} rows stay in flight at the service and are followed by the next run` : 'nothing is in flight at the service';
  const unknown = sending > 0 ? `; ${sending} rows were being sent: the next run asks the service about them by their external ids before sending anything again` : '';
  lines.push(`${inFlight}${unknown}. Nothing is lost and nothing is paid twice: the next paybatch run resumes from where this one stopped.`);
  return lines.join('\n');
}
