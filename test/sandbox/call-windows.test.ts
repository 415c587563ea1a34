/** The sandbox counts calls to its interface per one-second window, per endpoint and overall, for rate-limit tests. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CallWindows } from '../../src/sandbox/call-windows.js';
import type { WindowFigures } from '../../src/sandbox/call-windows.js';
import type { RunningSandbox } from '../../src/sandbox/start.js';
import { startSandbox } from '../../src/sandbox/start.js';

describe('calls per one-second window', () => {
  it('keeps the most any window held, per endpoint and overall', () => {
    let now = 10_000;
    const windows = new CallWindows(() => now);
    for (const at of [10_000, 10_400, 10_999, 11_000, 11_500, 12_100]) {
      now = at;
      windows.count(at === 11_500 ? 'fund' : 'create');
    }
    const figures = windows.figures();
    expect(figures.overall).toMatchObject({ calls: 6, max_in_window: 3, max_window_at: new Date(10_000).toISOString(), first_at_ms: 10_000, last_at_ms: 12_100 });
    expect(figures.create).toMatchObject({ calls: 5, max_in_window: 3 });
    expect(figures.fund).toMatchObject({ calls: 1, max_in_window: 1 });
    expect(figures.overall?.max_in_any_second).toBe(3);
  });

  it('counts any one-second span too: calls bunched across the turn of a second exceed it where no calendar second does', () => {
    let now = 0;
    const windows = new CallWindows(() => now);
    // Four in the end of one second, three in the start of the next: 4 in a calendar second, 7 within 600 ms.
    for (const at of [10_600, 10_700, 10_800, 10_900, 11_000, 11_100, 11_200, 12_199, 13_199]) {
      now = at;
      windows.count('create');
    }
    expect(windows.figures().create).toMatchObject({ max_in_window: 4, max_in_any_second: 7 });
    // A call exactly a second after another is in a span of its own: 12,199 and 13,199 never count together.
    const spaced = new CallWindows(() => now);
    for (const at of [0, 1000, 2000, 3000]) {
      now = at;
      spaced.count('read');
    }
    expect(spaced.figures().read).toMatchObject({ max_in_window: 1, max_in_any_second: 1 });
  });

  describe('over HTTP', () => {
    let sandbox: RunningSandbox;
    beforeEach(async () => {
      sandbox = await startSandbox({ config: { port: 0 } });
    });
    afterEach(async () => sandbox.stop());

    it('counts every request to the interface, refused ones too, by endpoint; DELETE starts over', async () => {
      for (let i = 0; i < 3; i++) expect((await fetch(`${sandbox.url}/transactions/tx-${i}`)).status).toBe(401);
      expect((await fetch(`${sandbox.url}/transactions`, { method: 'POST', body: '{}' })).status).toBe(401);
      const figures = (await (await fetch(`${sandbox.operatorUrl}/call-windows`)).json()) as Record<string, WindowFigures>;
      expect(figures.read?.calls).toBe(3);
      expect(figures.create?.calls).toBe(1);
      expect(figures.overall?.calls).toBe(4);
      expect(figures.overall?.max_in_window).toBeGreaterThanOrEqual(2);
      expect(await (await fetch(`${sandbox.operatorUrl}/call-windows`, { method: 'DELETE' })).json()).toEqual({});
    });
  });
});
