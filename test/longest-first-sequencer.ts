/**
 * The order files start in: each group (vitest.config.ts) in turn, and within one the files known to be long first,
 * whatever their tier, so that none is left running alone at the end while the other workers have nothing to do.
 * vitest's own order puts one project's files before another's and, with no record of earlier runs (a fresh clone,
 * CI), the larger files first: there chaos-short and xlsx-huge started last and ended the run alone (344 s, against
 * 308 s with the durations of a run before). Known to be long: test/tiers.ts LONGEST, then vitest's record of the
 * last run's durations where it has one, then the larger file.
 */
import { relative } from 'node:path';
import type { TestSpecification } from 'vitest/node';
import { BaseSequencer } from 'vitest/node';
import { LONGEST } from './tiers.js';

export default class LongestFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const { cache, config } = this.ctx;
    const path = (spec: TestSpecification): string => relative(config.root, spec.moduleId);
    const listed = (spec: TestSpecification): number => {
      const at = LONGEST.indexOf(path(spec));
      return at === -1 ? LONGEST.length : at;
    };
    const lastDuration = (spec: TestSpecification): number => cache.getFileTestResults(`${spec.project.name}:${path(spec)}`)?.duration ?? -1;
    const size = (spec: TestSpecification): number => cache.getFileStats(`${spec.project.name}:${path(spec)}`)?.size ?? 0;
    return [...files].sort((a, b) =>
      a.project.config.sequence.groupOrder - b.project.config.sequence.groupOrder
      || listed(a) - listed(b)
      || lastDuration(b) - lastDuration(a)
      || size(b) - size(a));
  }
}
