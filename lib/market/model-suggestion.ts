import "server-only";

/**
 * "Did you mean": the catalog id a mistyped or foreign model id most likely means. Clients written for OpenRouter,
 * Together or Hugging Face send `meta-llama/llama-3.3-70b-instruct` where svc's catalog says `llama-3.3-70b`; so ids
 * are compared without their vendor prefix, a `:variant` suffix, the usual release suffixes (instruct, chat, it, hf)
 * and punctuation, against both the catalog's ids and its display names. A match is the same, one the prefix of the
 * other, or a few edits apart (at most a fifth of the longer one, at least 2); the closest wins, ties by id.
 */
export function suggestModelId(wanted: string, models: Iterable<{ id: string; name: string }>): string | null {
  const target = normalize(wanted);
  if (target.length < 2) return null;
  let best: { id: string; score: number } | null = null;
  for (const model of models) {
    for (const candidate of [normalize(model.id), normalize(model.name)]) {
      const score = distance(target, candidate);
      if (score === null) continue;
      if (!best || score < best.score || (score === best.score && model.id < best.id)) best = { id: model.id, score };
    }
  }
  return best?.id ?? null;
}

const RELEASE_SUFFIXES = /(^|[-_. ])(instruct|chat|it|hf|latest|preview)(?=$|[-_. ])/g;

function normalize(id: string): string {
  const base = id.toLowerCase().split("/").pop()!.replace(/:.*$/, "");
  return base.replace(RELEASE_SUFFIXES, "$1").replace(/[^a-z0-9]/g, "");
}

/** 0 for the same, 1 for a prefix, else 2 + the edit distance when within the bound; null for no match. */
function distance(a: string, b: string): number | null {
  if (b.length < 2) return null;
  if (a === b) return 0;
  if (Math.min(a.length, b.length) >= 4 && (a.startsWith(b) || b.startsWith(a))) return 1;
  const bound = Math.max(2, Math.floor(Math.max(a.length, b.length) / 5));
  if (Math.abs(a.length - b.length) > bound) return null;
  const edits = levenshtein(a, b, bound);
  return edits <= bound ? 2 + edits : null;
}

/** Edit distance, giving up (bound + 1) once every path exceeds the bound. */
function levenshtein(a: string, b: string, bound: number): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    let rowMin = i;
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
      rowMin = Math.min(rowMin, current[j]);
    }
    if (rowMin > bound) return bound + 1;
    previous = current;
  }
  return previous[b.length];
}
