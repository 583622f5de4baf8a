/** Round axis values for the charts: steps of 1, 2 or 5 times a power of ten, and ticks on their multiples. */

/** A round step that cuts `range` into about `ticks` parts. */
export function niceStep(range: number, ticks: number): number {
  if (!(range > 0)) return 1;
  const raw = range / ticks;
  const power = 10 ** Math.floor(Math.log10(raw));
  const n = raw / power;
  return (n < 1.5 ? 1 : n < 3 ? 2 : n < 7 ? 5 : 10) * power;
}

/**
 * Ticks at multiples of a round step covering [min, max] (never below `floor`), at least two: the axis then starts
 * and ends on round values ("70¢ 75¢ 80¢", not "73¢ 77.5¢ 82¢"), and a flat series still gets a band around it.
 */
export function niceTicks(min: number, max: number, ticks: number, floor = -Infinity): number[] {
  // A span of at least a tenth of the value: a flat or nearly flat series is not stretched into cliffs.
  const step = niceStep(Math.max(max - min, Math.abs(max) * 0.1, 1e-9), ticks);
  let lo = Math.floor(min / step) * step;
  let hi = Math.ceil(max / step) * step;
  if (lo === hi) {
    lo -= step;
    hi += step;
  }
  lo = Math.max(floor, lo);
  const count = Math.round((hi - lo) / step);
  // Multiply rather than add, so 0.1-steps do not drift into 0.30000000000000004.
  return Array.from({ length: count + 1 }, (_, i) => Number((lo + i * step).toPrecision(12)));
}
