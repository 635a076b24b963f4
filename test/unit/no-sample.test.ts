import { Gauge, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { noSample } from '../../api/metrics/no-sample.js';

describe('a gauge with nothing to say', () => {
  it('is exposed with no sample (absent to Prometheus), where reset() alone would say 0, and takes a value again on the next scrape', async () => {
    const registry = new Registry();
    let value: number | null = null;
    new Gauge({
      name: 'x_reachable',
      help: 'x',
      registers: [registry],
      collect() {
        this.reset();
        if (value === null) noSample(this);
        else this.set(value);
      },
    });
    const text = await registry.metrics();
    expect(text).toContain('# TYPE x_reachable gauge');
    expect(text).not.toMatch(/^x_reachable /m);
    value = 0;
    expect(await registry.metrics()).toMatch(/^x_reachable 0$/m);
    value = null;
    expect(await registry.metrics()).not.toMatch(/^x_reachable /m);
  });
});
