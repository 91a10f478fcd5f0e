// Scales and axes: a value to a height, round tick values, which buckets get a time label, and
// a bucket's time as a label (UTC, as the rest of the console shows times).

/** Round ticks from 0 to at least `max`: `{ticks, top}` (`top` the highest tick); whole
 * numbers only with `integers` (counts). */
export function niceTicks(max, { count = 4, integers = false } = {}) {
  if (!(max > 0)) return { ticks: [0, 1], top: 1 };
  const rough = max / count;
  const power = 10 ** Math.floor(Math.log10(rough));
  const steps = [1, 2, 2.5, 5, 10].map((m) => m * power).filter((step) => !integers || Number.isInteger(step));
  const step = integers && rough <= 1 ? 1 : steps.find((candidate) => candidate >= rough);
  const top = Math.ceil(max / step - 1e-9) * step;
  const ticks = [];
  for (let i = 0; i * step <= top + step / 1e6; i += 1) ticks.push(round(i * step));
  return { ticks, top: round(top) };
}

function round(value) {
  return Number(value.toPrecision(12));
}

/** A linear map of [0, top] onto [bottom, topPixel] (SVG's y grows downwards). */
export function linear(top, bottomPixel, topPixel) {
  return (value) => bottomPixel - (value / top) * (bottomPixel - topPixel);
}

/** The indexes of the buckets that carry a time label on the x axis: at most `most`, evenly. */
export function labelled(length, most = 7) {
  if (length <= 0) return [];
  const every = Math.max(1, Math.ceil(length / most));
  const picked = [];
  for (let i = 0; i < length; i += every) picked.push(i);
  return picked;
}

const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];

/** A bucket's start on the axis: "03:05" (minutes), "Dec 6 03:00" (hours), "Dec 6" (days). */
export function shortTime(iso, bucketSeconds) {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return String(iso);
  const pad = (n) => String(n).padStart(2, "0");
  const clock = `${pad(date.getUTCHours())}:${pad(date.getUTCMinutes())}`;
  const day = `${MONTHS[date.getUTCMonth()]} ${date.getUTCDate()}`;
  if (bucketSeconds >= 86400) return day;
  if (bucketSeconds >= 3600) return `${day} ${clock}`;
  return clock;
}

/** A bucket as a span a person reads: "2026-12-06 03:05–03:06 UTC", "2026-12-06". */
export function bucketSpan(iso, bucketSeconds) {
  const start = new Date(iso);
  if (Number.isNaN(start.getTime())) return String(iso);
  const date = start.toISOString().slice(0, 10);
  if (bucketSeconds >= 86400) return date;
  const end = new Date(start.getTime() + bucketSeconds * 1000);
  const clock = (d) => d.toISOString().slice(11, 16);
  return `${date} ${clock(start)}–${clock(end)} UTC`;
}
