// Figures of several runs: percentiles of one run's latencies, median and range across runs, and the printed lines.

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[index];
}

export const median = (values: number[]) => percentile([...values].sort((a, b) => a - b), 50);

/** "812 (640–905)": the median of the runs and their range. */
export function spread(values: number[], digits = 0): string {
  const sorted = [...values].sort((a, b) => a - b);
  const format = (value: number) => value.toLocaleString('en', { minimumFractionDigits: digits, maximumFractionDigits: digits });
  return sorted.length === 1 ? format(sorted[0]) : `${format(median(sorted))} (${format(sorted[0])}–${format(sorted.at(-1)!)})`;
}

export interface Row {
  label: string;
  values: number[];
  unit: string;
  digits?: number;
}

/** One line of a figure: label, median (range) and unit. */
export function line(row: Row): string {
  return `  ${row.label.padEnd(46)} ${spread(row.values, row.digits ?? 0).padStart(26)} ${row.unit}`;
}

export function heading(title: string, note?: string): void {
  console.log(`\n${title}${note ? `\n  ${note}` : ''}`);
}

/** Repeats `measure` `runs` times (interleaving happens inside it) and answers each figure's values. */
export async function repeat<T extends Record<string, number>>(runs: number, measure: (run: number) => Promise<T>): Promise<Record<keyof T, number[]>> {
  const collected = {} as Record<keyof T, number[]>;
  for (let run = 0; run < runs; run++) {
    const figures = await measure(run);
    for (const [key, value] of Object.entries(figures) as [keyof T, number][]) (collected[key] ??= []).push(value);
  }
  return collected;
}

/** Element-wise ratio of two series (same run against same run). */
export const ratios = (numerators: number[], denominators: number[]) => numerators.map((value, index) => value / denominators[index]);

export const settings = {
  runs: Number(process.env.BENCH_RUNS ?? 5),
  seconds: Number(process.env.BENCH_SECONDS ?? 4),
};

/** The lines of a throughput figure: Herald's rate and p99, the baseline's, and their ratio. */
export function printVersus(figures: { ours: number[]; oursP99: number[]; bare: number[]; bareP99: number[] }, labels: { unit: string; baseline: string; ratio: string }): void {
  console.log(line({ label: 'Herald', values: figures.ours, unit: labels.unit }));
  console.log(line({ label: 'Herald p99', values: figures.oursP99, unit: 'ms', digits: 1 }));
  console.log(line({ label: labels.baseline, values: figures.bare, unit: labels.unit }));
  console.log(line({ label: 'baseline p99', values: figures.bareP99, unit: 'ms', digits: 1 }));
  console.log(line({ label: labels.ratio, values: ratios(figures.ours, figures.bare), unit: '', digits: 2 }));
}
