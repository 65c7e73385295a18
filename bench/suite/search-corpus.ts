/**
 * The ranked-search corpus of one user, deterministic (the suite's prng, seed 42 unless told):
 * English-like messages of 6–30 words drawn from a Zipf vocabulary of 30 000 words (its first
 * 30 are English stop words), one message in ten in Chinese (two-character words over 2 500
 * characters drawn Zipf, so bigrams repeat as in real text), 1 000 messages a day from
 * 2024-01-01. Query sets draw from the same vocabularies: rare words (ranks 10 000–30 000),
 * common ones (ranks 30–130), mid-frequency ones (ranks 200–4 200) and Chinese words.
 */
import { prng } from './records.ts';

export const ROWS_PER_DAY = 1_000;

export interface SearchCorpus {
  message(i: number): string;
  dayOf(i: number): string;
  rare(): string;
  common(): string;
  mid(): string;
  chinese(): string;
}

export function searchCorpus(seed = 42): SearchCorpus {
  const rand = prng(seed);
  const zipf = (n: number): (() => number) => {
    const cdf = new Float64Array(n);
    let sum = 0;
    for (let i = 0; i < n; i++) cdf[i] = sum += 1 / (i + 1);
    return () => {
      const x = rand() * sum;
      let lo = 0;
      let hi = n - 1;
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if (cdf[mid]! < x) lo = mid + 1;
        else hi = mid;
      }
      return lo;
    };
  };
  const SYL = ['ka', 'lo', 'mi', 'ter', 'san', 'vo', 'ri', 'den', 'ul', 'pra', 'mo', 'ne', 'sti', 'gar', 'fel', 'do', 'bri', 'tan', 'el', 'quo'];
  const COMMON = 'the a to and of i you is it in that for on my we with this be have are at can me so do not was what but'.split(' ');
  const vocab: string[] = [...COMMON];
  for (let i = 0; vocab.length < 30_000; i++) {
    let w = '';
    for (let n = i; ; n = Math.floor(n / SYL.length) - 1) {
      w = SYL[n % SYL.length]! + w;
      if (n < SYL.length) break;
    }
    vocab.push(w);
  }
  const word = zipf(vocab.length);
  const hanChar = zipf(2_500);
  const zhWords: string[] = [];
  for (let i = 0; i < 8_000; i++) zhWords.push(String.fromCodePoint(0x4e00 + hanChar() * 7, 0x4e00 + hanChar() * 7));
  const zhWord = zipf(zhWords.length);
  return {
    message(i) {
      if (i % 10 === 9) {
        const n = 4 + Math.floor(rand() * 15);
        let s = '';
        for (let k = 0; k < n; k++) s += zhWords[zhWord()]!;
        return s;
      }
      const n = 6 + Math.floor(rand() * 25);
      const words: string[] = [];
      for (let k = 0; k < n; k++) words.push(vocab[word()]!);
      return words.join(' ');
    },
    dayOf(i) {
      return new Date(Date.UTC(2024, 0, 1) + Math.floor(i / ROWS_PER_DAY) * 86_400_000).toISOString().slice(0, 10);
    },
    rare: () => vocab[10_000 + Math.floor(rand() * 20_000)]!,
    common: () => vocab[30 + Math.floor(rand() * 100)]!,
    mid: () => vocab[200 + Math.floor(rand() * 4_000)]!,
    chinese: () => zhWords[Math.floor(rand() * 2_000)]! + zhWords[Math.floor(rand() * 2_000)]!,
  };
}
