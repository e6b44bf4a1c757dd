import { continueTrace, currentTraceparent, formatTraceparent, parseTraceparent, runInTrace } from '../src/trace-context';

describe('trace context', () => {
  test('a request without a traceparent starts a trace: ids of the W3C length, never all zero, none twice', () => {
    const traces = Array.from({ length: 2_000 }, () => continueTrace(undefined));
    for (const trace of traces) {
      expect(trace.traceId).toMatch(/^[0-9a-f]{32}$/);
      expect(trace.spanId).toMatch(/^[0-9a-f]{16}$/);
      expect(trace.flags).toBe('01');
      expect(parseTraceparent(formatTraceparent(trace))).toEqual(trace);
    }
    expect(new Set(traces.map((t) => t.traceId)).size).toBe(traces.length);
    expect(new Set(traces.map((t) => t.spanId)).size).toBe(traces.length);
  });

  test('a request with a traceparent continues its trace with a span of its own, keeping the flags', () => {
    const parent = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00';
    const child = continueTrace(parent);
    expect(child.traceId).toBe('4bf92f3577b34da6a3ce929d0e0e4736');
    expect(child.spanId).toMatch(/^[0-9a-f]{16}$/);
    expect(child.spanId).not.toBe('00f067aa0ba902b7');
    expect(child.flags).toBe('00');
    expect(runInTrace(child, () => currentTraceparent())).toBe(`00-${child.traceId}-${child.spanId}-00`);
  });
});
