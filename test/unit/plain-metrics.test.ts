import { Counter, Histogram, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { PlainCounter, PlainHistogram } from '../../src/metrics/plain-metrics.js';

const BOUNDS = [0.001, 0.01, 0.1, 1];

describe('plain metrics', () => {
  it('expose exactly what prom-client exposes for the same updates', async () => {
    const reference = new Registry();
    const plain = new Registry();
    const counter = new Counter({ name: 'requests_total', help: 'Requests.', labelNames: ['route', 'status'], registers: [reference] });
    const histogram = new Histogram({ name: 'duration_seconds', help: 'Latency "quoted" \\ and escaped.', labelNames: ['route'], buckets: BOUNDS, registers: [reference] });
    const plainCounter = new PlainCounter('requests_total', 'Requests.', plain);
    const plainHistogram = new PlainHistogram('duration_seconds', 'Latency "quoted" \\ and escaped.', [...BOUNDS].reverse(), plain);

    // Values on the bounds, between them, above them all, and label values needing escapes.
    const updates: [string, string, number][] = [
      ['/mcp', '200', 0.0004],
      ['/mcp', '200', 0.001],
      ['/mcp', '401', 0.05],
      ['/mcp', '200', 3],
      ['/a "b"\\c', '404', 0.01],
      ['/healthz', '200', 1],
    ];
    for (const [route, status, seconds] of updates) {
      counter.inc({ route, status });
      histogram.observe({ route }, seconds);
      plainCounter.series({ route, status }).inc();
      plainHistogram.series({ route }).observe(seconds);
    }
    const expected = await reference.metrics();
    expect(expected).toContain('duration_seconds_bucket{le="0.01",route="/mcp"} 2');
    expect(await plain.metrics()).toBe(expected);
  });

  it('bind a label set to one series', () => {
    const registry = new Registry();
    const counter = new PlainCounter('bound_total', 'Bound.', registry);
    counter.series({ route: '/mcp', status: '200' }).inc();
    counter.series({ route: '/mcp', status: '200' }).inc();
    expect(counter.series({ route: '/mcp', status: '200' }).value).toBe(2);
    expect(counter.series({ route: '/mcp', status: '500' }).value).toBe(0);
  });
});
