import { describe, expect, it } from 'vitest';
import schema from '../../../shared/schemas/telemetry.schema.json';
import vectors from '../../../shared/vectors/telemetry.json';
import type { TelemetryRecord } from '../protocol/telemetry';
import { CHARTS, DashboardModel, REMY_CHARTS, SPROUT_CHARTS, controllerFamily } from './model';

// The telemetry contract (shared/schemas/telemetry.schema.json) from the TypeScript side.
// pytest validates the vectors with jsonschema; here a check of the subset the schema uses
// (per-type required fields and value types) keeps the page free of a validator library.

type Json = Record<string, unknown>;
interface Rule {
  required: string[];
  properties: Record<string, Json>;
}

function rules(): Map<string, Rule> {
  const out = new Map<string, Rule>();
  for (const branch of schema.allOf as Json[]) {
    const type = ((branch['if'] as Json)['properties'] as Json)['type'] as Json;
    const then = branch['then'] as Json;
    out.set(type['const'] as string, { required: (then['required'] as string[]) ?? [], properties: (then['properties'] as Record<string, Json>) ?? {} });
  }
  return out;
}

function typeOk(value: unknown, property: Json): boolean {
  const ref = property['$ref'] as string | undefined;
  const defs = schema.$defs as Record<string, Json>;
  if (ref !== undefined) {
    const name = ref.split('/').pop()!;
    if (name === 'time') return typeof value === 'number';
    if (name === 'fraction') return typeof value === 'number' && value >= 0 && value <= 1;
    if (value === null) return true;
    if (name === 'nonnegative') return typeof value === 'number' && value >= 0;
    return name in defs && typeof value === 'number';
  }
  switch (property['type']) {
    case 'string':
      return typeof value === 'string';
    case 'boolean':
      return typeof value === 'boolean';
    case 'integer':
      return Number.isInteger(value) && (property['minimum'] === undefined || (value as number) >= (property['minimum'] as number));
    case 'number':
      return typeof value === 'number';
    case 'object':
      return typeof value === 'object' && value !== null && !Array.isArray(value);
    case 'array':
      return Array.isArray(value) && value.every((v) => typeOk(v, property['items'] as Json));
    default:
      return true;
  }
}

/** Fields of `record` that break the schema (empty: it conforms). */
function violations(record: Json): string[] {
  if (typeof record['type'] !== 'string') return ['type'];
  const rule = rules().get(record['type']);
  if (rule === undefined) return [];
  const bad = rule.required.filter((f) => !(f in record));
  for (const [field, property] of Object.entries(rule.properties)) {
    if (field in record && !typeOk(record[field], property)) bad.push(field);
  }
  return bad;
}

describe('telemetry vectors (shared/vectors/telemetry.json)', () => {
  it.each(vectors.valid)('$name conforms', ({ record }) => {
    expect(violations(record as Json)).toEqual([]);
  });
  it.each(vectors.invalid)('$name fails at its field', ({ record, field }) => {
    expect(violations(record as Json)).toContain(field);
  });
});

const byName = (name: string): TelemetryRecord => {
  const v = vectors.valid.find((x) => x.name === name);
  if (!v) throw new Error(`no vector ${name}`);
  return v.record as TelemetryRecord;
};
const hello = (cc: string): TelemetryRecord => ({ ...byName('hello, sprout session'), cc });
const at = (r: TelemetryRecord, tMs: number, extra: Json = {}): TelemetryRecord => ({ ...r, t_ms: tMs, ...extra });

describe('dashboard views chosen by the controller', () => {
  it('knows the families by name', () => {
    expect(['sprout', 'sprout-ewma', 'remy', 'remy:table=2014-100x', 'vivace', 'cubic', null].map(controllerFamily)).toEqual([
      'sprout',
      'sprout',
      'remy',
      'remy',
      'pcc',
      'pcc',
      'pcc',
    ]);
  });

  it('a PCC session keeps utility and state, no Sprout or Remy charts', () => {
    const m = new DashboardModel();
    m.ingest(hello('vivace'));
    expect(m.charts.map((c) => c.id)).toEqual(CHARTS.map((c) => c.id));
    expect(m.controllerRows()).toEqual([]);
  });

  it('a Sprout session draws the forecast, the allowed rate and the queue estimate', () => {
    const m = new DashboardModel();
    m.ingest(hello('sprout'));
    const ids = m.charts.map((c) => c.id);
    expect(ids).toEqual(['rate', 'rtt', 'loss', 'window', 'sprout-rate', 'sprout-forecast', 'player']);
    const tick = byName('sprout tick');
    m.ingest(at(tick, 1500, { tick_end_ms: 1480 }));
    m.ingest(at(tick, 1520, { tick_end_ms: 1500 }));
    const slow = new DashboardModel();
    slow.ingest({ ...hello('sprout'), cc_params: { tick_ms: '40' } });
    slow.ingest(tick);
    expect(slow.tables['sprout-rate'].columns[1]![0]).toBeCloseTo(25 / 0.04, 9); // cc.tick_ms=40
    const p = m.points();
    for (const chart of SPROUT_CHARTS) for (const s of chart.series) expect(p[`${chart.id}/${s.label}`], s.label).toBeGreaterThan(0);
    // Last row: the forecast within 1 and 4 ticks and the horizon (8), arrivals, queue.
    expect(m.tables['sprout-forecast'].data().slice(1).map((c) => c.at(-1))).toEqual([13, 63, 132, 25, 85]);
    // Allowed 7.92 Mbit/s; cautious rate 132 packets over 8 ticks of 20 ms; mean 976.1.
    const rate = m.tables['sprout-rate'];
    expect(rate.columns[0]!.at(-1)).toBeCloseTo(7.92, 9);
    expect(rate.columns[1]!.at(-1)).toBeCloseTo(25 / 0.02, 9); // arrivals over the 20 ms tick
    expect(rate.columns[2]!.at(-1)).toBe(976.1);
    expect(rate.columns[3]!.at(-1)).toBeCloseTo(132 / 0.16, 9);
    const rows = Object.fromEntries(m.controllerRows());
    expect(rows['Sprout: cautious forecast (cumulative packets per tick)']).toBe('13, 29, 46, 63, 80, 97, 115, 132');
    expect(rows['Sprout: window allowed']).toBe('158.4 kB = 7.92 Mbit/s');
    expect(rows['Sprout: queue estimate']).toBe('85 packets');
    expect(rows['Sprout: arrivals in the last tick']).toBe('25.0 packets (queue busy)');
  });

  it('sprout-ewma has no forecast: the forecast series stay empty, no forecast row', () => {
    const m = new DashboardModel();
    m.ingest(hello('sprout-ewma'));
    m.ingest(byName('sprout-ewma tick (no forecast, no busy)'));
    const p = m.points();
    expect(p['sprout-forecast/forecast within 1 tick']).toBe(0);
    expect(p['sprout-forecast/queue estimate']).toBe(1);
    expect(p['sprout-rate/model mean rate (pkt/s)']).toBe(1);
    expect(m.controllerRows().map(([k]) => k)).not.toContain('Sprout: cautious forecast (cumulative packets per tick)');
  });

  it('a Remy session draws its memory and the rule that fired', () => {
    const m = new DashboardModel();
    m.ingest(hello('remy'));
    expect(m.charts.map((c) => c.id)).toEqual(['rate', 'rtt', 'loss', 'window', 'remy-memory', 'remy-rule', 'remy-window', 'player']);
    m.ingest(byName('remy rule'));
    m.ingest(byName('remy rule, negative increment'));
    const p = m.points();
    for (const chart of REMY_CHARTS) for (const s of chart.series) expect(p[`${chart.id}/${s.label}`], s.label).toBe(2);
    const rule = m.tables['remy-rule'];
    expect(rule.x[1]).toBeCloseTo(1.5529, 6);
    expect(rule.data().slice(1)).toEqual([
      [62, 7],
      [1.2296, 2.5],
    ]);
    expect(m.tables['remy-window'].data().slice(1)).toEqual([
      [10, -3],
      [0.98, 0.5],
    ]);
    expect(m.tables['remy-memory'].columns[4]).toEqual([1, 1.75]);
    const rows = Object.fromEntries(m.controllerRows());
    expect(rows['Remy: rule fired']).toBe('#7');
    expect(rows['Remy: action']).toBe('window × 0.500 − 3 packets, intersend 2.50 ms');
    expect(rows['Remy: send / receive EWMA']).toBe('3.50 / 4.25 ms (slow: 4.10 ms)');
  });

  it('switches to the family of the records it sees, and keys the charts for a remount', () => {
    const m = new DashboardModel();
    m.ingest(hello('some-future-name'));
    const before = m.chartsKey;
    m.ingest(byName('remy rule'));
    expect(m.family).toBe('remy');
    expect(m.chartsKey).not.toBe(before);
  });
});
