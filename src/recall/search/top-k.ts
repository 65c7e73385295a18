/**
 * The `k` highest-scored entries of a score map, best first (ties: lower doc number first, so
 * results are stable), with a bounded min-heap: O(n log k), no sort of every candidate.
 */
export function topK(scores: ReadonlyMap<number, number>, k: number): [number, number][] {
  const heap: [number, number][] = [];
  const worse = (a: [number, number], b: [number, number]) => a[1] < b[1] || (a[1] === b[1] && a[0] > b[0]);
  const down = (i: number) => {
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < heap.length && worse(heap[l]!, heap[m]!)) m = l;
      if (r < heap.length && worse(heap[r]!, heap[m]!)) m = r;
      if (m === i) return;
      [heap[i], heap[m]] = [heap[m]!, heap[i]!];
      i = m;
    }
  };
  for (const [doc, score] of scores) {
    if (heap.length < k) {
      heap.push([doc, score]);
      for (let i = heap.length - 1; i > 0; ) {
        const p = (i - 1) >> 1;
        if (!worse(heap[i]!, heap[p]!)) break;
        [heap[i], heap[p]] = [heap[p]!, heap[i]!];
        i = p;
      }
    } else if (worse(heap[0]!, [doc, score])) {
      heap[0] = [doc, score];
      down(0);
    }
  }
  return heap.sort((a, b) => (worse(a, b) ? 1 : worse(b, a) ? -1 : 0));
}
