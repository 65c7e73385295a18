import { afterEach, describe, expect, it } from 'vitest';
import { commit, openRecallDbs } from '../../src/recall/storage/lmdb/recall-dbs.ts';
import { scoreTerms } from '../../src/recall/storage/lmdb/search/bm25-query.ts';
import { CHUNK_POSTINGS, decodeChunk, encodeChunk, type Posting } from '../../src/recall/storage/lmdb/search/posting-list.ts';
import { porterStem } from '../../src/recall/search/porter-stemmer.ts';
import { TAIL } from '../../src/recall/storage/lmdb/search/search-dbs.ts';
import { dailyDoc, docRef } from '../../src/recall/search/doc-numbers.ts';
import { docTermArrays, docTerms } from '../../src/recall/search/documents.ts';
import { addDocument, mergePending, PENDING_BLOCK, PENDING_MAX, readStats, removeDocument } from '../../src/recall/storage/lmdb/search/search-index.ts';
import { appendRecord, bloomProbes, forEachRecordTerm, mayHold } from '../../src/recall/storage/lmdb/search/pending-log.ts';
import { tokenize, tokenizeWithOffsets } from '../../src/recall/search/tokenizer.ts';
import { openRecall, type RecallFixture } from '../support/recall-fixture.ts';
import { putDailyRow } from '../../src/recall/storage/lmdb/daily-store.ts';
import { rawRowText } from '../../src/recall/storage/lmdb/search/raw-row-text.ts';
import { storedRowText } from '../../src/recall/storage/lmdb/search/search-index.ts';
import type { DailyValue } from '../../src/recall/storage/lmdb/stored-values.ts';

let fx: RecallFixture | undefined;
afterEach(async () => {
  await fx?.close();
  fx = undefined;
});

describe('the tokenizer', () => {
  it('folds case and width, drops stop words and stems English', () => {
    expect(tokenize('The Meetings were RESCHEDULED to Ｆｒｉｄａｙ')).toEqual(['meet', 'reschedul', 'fridai']);
  });

  it('cuts Chinese and Japanese runs into bigrams, and mixed runs apart', () => {
    expect(tokenize('北京天气')).toEqual(['北京', '京天', '天气']);
    expect(tokenize('iPhone用户')).toEqual(['iphon', '用户']);
    expect(tokenize('猫')).toEqual(['猫']);
    expect(tokenize('東京の天気')).toEqual(['東京', '京の', 'の天', '天気']);
  });

  it('joins a noun in -y with its adjective in -ic, and keeps short stems apart', () => {
    expect(tokenize('allergies allergy allergic')).toEqual(['allerg', 'allerg', 'allerg']);
    expect(tokenize('pharmacies pharmacy')).toEqual(['pharmac', 'pharmac']);
    expect(tokenize('taxi tax')).toEqual(['taxi', 'tax']);
  });

  it('cuts ASCII text on its fast path into the same terms as the general path (the snippets\' offsets)', () => {
    const general = (text: string) => [...tokenizeWithOffsets(text)].map((t) => t.term);
    const texts = [
      'Meeting moved to 3pm, see https://example.com/a_b?c=d#E -- OK?',
      'café au lait, naïve résumé', // non-ASCII mid-run: the run is cut whole by the general path
      'e\u0301tude and cafe\u0301', // a combining mark after an ASCII letter
      'plain words then 北京天气 then more words', // a CJK run after ASCII
      'iPhone用户 and 東京の天気 and 猫',
      'full-width ＡＢＣ１ and the ligature ﬁle', // NFKC
      '丽 and 乁 and 𠀀𠀁 (a compatibility ideograph, a BMP one and a supplementary pair)',
      'ｶﾀｶﾅ half-width katakana',
      '收到：Meeting moved to Friday。我已经记录到记忆中。', // the offline reply: CJK, ASCII, CJK punctuation
      'emoji 👍🏽 between words, résumé—dash, 3×4, x\u0301y', // symbols outside runs, a mark mid-run
      '', '   ', 'a', 'the and of', 'x'.repeat(70) + ' y',
    ];
    for (const text of texts) expect(tokenize(text), text).toEqual(general(text));
    // Every Chinese run of 1 to 5 characters, on the bigram fast path.
    for (let n = 1; n <= 5; n++) {
      const run = '北京天气好'.slice(0, n);
      expect(tokenize(run)).toEqual(general(run));
    }
  });

  it('cuts the same terms once its word cache is full and overwritten (more distinct words than its slots)', () => {
    const general = (text: string) => [...tokenizeWithOffsets(text)].map((t) => t.term);
    const words = Array.from({ length: 150_000 }, (_, i) => `w${i.toString(36)}ing`);
    const text = (from: number) => words.slice(from, from + 1_000).join(' ') + ' Meetings MEETING meeting';
    for (const from of [0, 70_000, 140_000, 0, 70_000]) expect(tokenize(text(from))).toEqual(general(text(from)));
  });

  it('gives a document the same terms and counts as arrays (the rebuild\'s form) as in a Map', () => {
    const long = Array.from({ length: 80 }, (_, i) => `word${i % 50} the meeting`).join(' ');
    for (const text of ['', 'the and', 'meeting meetings met 北京天气 北京', long, 'a b c a b a']) {
      const arrays = docTermArrays(text);
      const map = docTerms(text);
      expect(new Map(arrays.terms.map((t, i) => [t, arrays.tfs[i]]))).toEqual(map.terms);
      expect(arrays.terms).toEqual([...map.terms.keys()]);
      expect(arrays.length).toBe(map.length);
    }
  });

  it('stems as Porter does', () => {
    const pairs: [string, string][] = [
      ['caresses', 'caress'], ['ponies', 'poni'], ['cats', 'cat'], ['feed', 'feed'], ['agreed', 'agre'],
      ['plastered', 'plaster'], ['motoring', 'motor'], ['sing', 'sing'], ['conflated', 'conflat'], ['hopping', 'hop'],
      ['filing', 'file'], ['happy', 'happi'], ['relational', 'relat'], ['conditional', 'condit'], ['generalization', 'gener'],
      ['electricity', 'electr'], ['adjustment', 'adjust'], ['adoption', 'adopt'], ['controlling', 'control'], ['roll', 'roll'],
    ];
    for (const [word, stem] of pairs) expect(porterStem(word), word).toBe(stem);
  });
});

describe('a daily row\'s text read from its raw JSON', () => {
  it('is the decoded row\'s text: escapes, any script, tool calls, nested content keys', async () => {
    fx = openRecall();
    const dbs = openRecallDbs(fx.env);
    const row = (content: string, more: Partial<DailyValue> = {}): DailyValue => ({ ts: '2026-03-01T10:00:00', role: 'user', content, session_id: 's', session_message_id: 1, ...more });
    const values: DailyValue[] = [
      row('plain ASCII words'),
      row(''),
      row('quotes "inside", a backslash \\ and \\", a tab\tand\nlines, a NUL \u0000 and \u2028'),
      row('北京天气 café naïve 😀 ﬁnance ＡＢＣ'),
      row('ends with a backslash \\'),
      row('"content":"not the key" inside the text'),
      row('with tools', { tool_calls: [{ name: 'lookup', input: '{"q":"osprey"}', output: 'nest "found"' }] as never }),
      row('imported', { import: { ts: 'x', content: null, meta: { content: 'nested' } } }),
      row('an error', { error: { code: 'x', message: 'content' } as never }),
    ];
    await commit(dbs, () => values.forEach((v) => putDailyRow(dbs, 'raw-user', { day: '2026-03-01', ...v })));
    const stored = [...dbs.daily.getRange({ start: ['raw-user'], end: ['raw-user', '\uffff'] })];
    expect(stored.length).toBe(values.length);
    for (const { key, value } of stored) expect(rawRowText(dbs.dailyText.get(key)!)).toBe(storedRowText(value));
    expect(stored.map(({ value }) => value.content)).toEqual(values.map((v) => v.content));
  });
});

describe('document numbers', () => {
  it('are the row keys themselves, in key order', () => {
    const a = dailyDoc('2026-04-08', 1)!;
    const b = dailyDoc('2026-04-08', 2)!;
    const c = dailyDoc('2026-04-09', 1)!;
    expect(a < b && b < c).toBe(true);
    expect(docRef(b)).toEqual({ kind: 'daily', day: '2026-04-08', id: 2 });
    expect(docRef(3)).toEqual({ kind: 'long_term', line: 3 });
    expect(dailyDoc('1899-12-31', 1)).toBeNull();
    expect(dailyDoc('2026-04-08', 2 ** 22)).toBeNull();
  });
});

describe('posting lists', () => {
  it('round-trip gaps within a day and across days, tf of one and more, long lengths and long-term lines', () => {
    const postings: Posting[] = [
      { doc: 3, tf: 1, len: 4 },
      { doc: 4, tf: 2, len: 300 },
      { doc: dailyDoc('2024-01-01', 1)!, tf: 1, len: 1 },
      { doc: dailyDoc('2024-01-01', 999)!, tf: 7, len: 20 },
      { doc: dailyDoc('2024-01-02', 5)!, tf: 1, len: 2 },
      { doc: dailyDoc('2031-06-30', 4_194_303)!, tf: 200, len: 70_000 },
    ];
    expect(decodeChunk(encodeChunk(postings))).toEqual(postings);
    // A gap across days costs the day difference and the id, not a 4-byte doc delta.
    const crossDay = encodeChunk([postings[2]!, postings[4]!]).length - encodeChunk([postings[2]!]).length;
    expect(crossDay).toBeLessThanOrEqual(3);
  });

  it('score a document in the pending log exactly as once merged', async () => {
    fx = openRecall();
    const dbs = openRecallDbs(fx.env);
    const U = 'pl';
    const texts = ['heron heron pond', 'pond reeds', 'a heron at dawn over the pond and the reeds'];
    await commit(dbs, () => {
      for (let i = 0; i < 30; i++) addDocument(dbs.search, U, dailyDoc('2026-05-0' + (1 + (i % 9)), 1 + i)!, docTerms(texts[i % 3]!));
    });
    expect(readStats(dbs.search, U)[2]).toBe(30);
    const pending = scoreTerms(dbs.search, U, ['heron', 'pond']);
    await commit(dbs, () => mergePending(dbs.search, U));
    expect(readStats(dbs.search, U)[2]).toBe(0);
    expect(scoreTerms(dbs.search, U, ['heron', 'pond'])).toEqual(pending);
  });

  it('merge a log of non-ASCII terms and documents out of order into the postings they score with', async () => {
    fx = openRecall();
    const dbs = openRecallDbs(fx.env);
    const U = 'pz';
    const texts = ['北京天气 café', 'café crème 北京', 'tf tf tf 天气 naïve', '東京の天気 café'];
    // Newest first: every term's postings arrive in descending doc order.
    const docs = Array.from({ length: 40 }, (_, i) => dailyDoc('2026-06-01', 40 - i)!);
    await commit(dbs, () => docs.forEach((doc, i) => addDocument(dbs.search, U, doc, docTerms(texts[i % 4]!))));
    const terms = ['北京', '天气', 'café', 'tf', 'naïv', '東京'];
    const pending = scoreTerms(dbs.search, U, terms);
    expect(pending.size).toBe(40);
    await commit(dbs, () => mergePending(dbs.search, U));
    expect(scoreTerms(dbs.search, U, terms)).toEqual(pending);
    for (const term of terms) {
      const postings = [...dbs.search.postings.getRange({ start: [U, term], end: [U, term, 2 ** 53] })].flatMap((e) => decodeChunk(e.value));
      expect(postings.map((p) => p.doc)).toEqual([...postings.map((p) => p.doc)].sort((a, b) => a - b));
      expect(postings.length).toBe(docs.filter((_, i) => docTerms(texts[i % 4]!).terms.has(term)).length);
    }
    expect(decodeChunk(dbs.search.postings.get([U, 'tf', TAIL])!)[0]!.tf).toBe(3);
  });

  it('keep a Bloom filter in each pending block that holds every term of its documents and few others', () => {
    let block: Buffer | undefined;
    const present = new Set<string>();
    for (let d = 0; d < PENDING_BLOCK; d++) {
      const terms = new Map<string, number>();
      for (let k = 0; k < 20; k++) terms.set(`w${d}x${k}`, 1);
      terms.set('天气', 2);
      for (const t of terms.keys()) present.add(t);
      block = appendRecord(block, 1 + d, 21, terms);
    }
    const text = block!.toString('latin1');
    for (const t of present) expect(mayHold(text, bloomProbes(t)), t).toBe(true);
    let falsePositives = 0;
    for (let i = 0; i < 1000; i++) if (mayHold(text, bloomProbes(`absent${i}`))) falsePositives++;
    expect(falsePositives).toBeLessThan(150);
    const terms: string[] = [];
    forEachRecordTerm(block!, (term, doc) => doc === 3 && terms.push(term));
    expect(terms).toEqual([...Array.from({ length: 20 }, (_, k) => `w2x${k}`), '天气']);
  });

  it('stay exact under inserts in any order and removals, across chunk splits', async () => {
    fx = openRecall();
    const dbs = openRecallDbs(fx.env);
    const U = 'px';
    const model = new Set<number>();
    let seed = 1;
    const rand = (n: number) => {
      seed = (seed * 48271) % 2147483647;
      return seed % n;
    };
    const docOf = (i: number) => dailyDoc(`2026-0${1 + (i % 9)}-1${i % 10}`, 1 + i)!;
    // Mostly ascending (appends), with one in five written out of order, then random removals.
    // More documents than the pending log holds, so its merges run, amid removals of
    // documents both pending and merged.
    const N = PENDING_MAX * 2 + 300;
    const order = Array.from({ length: N }, (_, i) => i);
    for (let i = 0; i < order.length; i++) {
      if (rand(5) === 0) {
        const j = rand(order.length);
        [order[i], order[j]] = [order[j]!, order[i]!];
      }
    }
    for (let start = 0; start < order.length; start += 100) {
      await commit(dbs, () => {
        for (const i of order.slice(start, start + 100)) {
          addDocument(dbs.search, U, docOf(i), docTerms('shared word'));
          model.add(docOf(i));
        }
        for (let k = 0; k < 10; k++) {
          const i = order[start + rand(Math.min(100, order.length - start))]!;
          removeDocument(dbs.search, U, docOf(i), 'shared word');
          model.delete(docOf(i));
        }
      });
    }
    await commit(dbs, () => {
      for (let k = 0; k < 300; k++) {
        const i = rand(N);
        removeDocument(dbs.search, U, docOf(i), 'shared word');
        model.delete(docOf(i));
      }
    });
    const scored = [...scoreTerms(dbs.search, U, ['share']).keys()].sort((a, b) => a - b);
    expect(scored).toEqual([...model].sort((a, b) => a - b));
    expect(readStats(dbs.search, U)[0]).toBe(model.size);
    // Every chunk is within its bound, chunks are disjoint and ordered, the tail is last.
    let prevLast = -1;
    for (const { key, value } of dbs.search.postings.getRange({ start: [U, 'share'], end: [U, 'share', 2 ** 53] })) {
      const postings = decodeChunk(value);
      expect(postings.length).toBeGreaterThan(0);
      expect(postings.length).toBeLessThanOrEqual(CHUNK_POSTINGS);
      if (key[2] !== TAIL) expect(key[2]).toBeLessThanOrEqual(postings[0]!.doc);
      expect(postings[0]!.doc).toBeGreaterThan(prevLast);
      prevLast = postings[postings.length - 1]!.doc;
    }
  });
});
