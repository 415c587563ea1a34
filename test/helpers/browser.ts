/**
 * Debian's Chromium, driven by playwright-core: headless, no sandbox (tests run
 * as root in CI), no background networking. Where Chromium is not installed the
 * browser tests are skipped with one visible line, except under CI=true, where
 * they fail (.ci/run installs it).
 */
import { execFileSync } from 'node:child_process';
import type { Browser } from 'playwright-core';
import { chromium } from 'playwright-core';
import { requireTier } from '../tiers.js';

export function chromiumPath(): string | null {
  for (const name of ['chromium', 'chromium-browser']) {
    try {
      const path = execFileSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' }).trim();
      if (path) return path;
    } catch {
      // not this one
    }
  }
  return null;
}

/** The path of Chromium, or null after saying why its tests are skipped (throws under CI=true). */
export function browserAvailable(what: string): string | null {
  const path = chromiumPath();
  if (path) return path;
  if (process.env.CI === 'true') throw new Error(`${what} needs Chromium, and CI=true: install it (apt-get install -y chromium), as .ci/run does`);
  process.stdout.write(`skipped: ${what}: Chromium is not installed (apt-get install -y chromium)\n`);
  return null;
}

export function launchChromium(executablePath: string): Promise<Browser> {
  requireTier('Chromium', ['system']);
  return chromium.launch({ executablePath, headless: true, args: ['--no-sandbox', '--disable-background-networking', '--disable-component-update', '--no-first-run', '--disable-sync', '--disable-default-apps'] });
}
