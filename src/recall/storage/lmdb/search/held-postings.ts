import { CHUNK_POSTINGS, chunkFirstDoc, encodeRun, type PostingRun } from './posting-list.ts';
import { TAIL, type SearchDbs } from './search-dbs.ts';
import { countDocuments, putNewChunks } from './search-index.ts';
import type { TermArrays } from '../../../search/documents.ts';

/**
 * A rebuild's postings grouped by term, kept across its write transactions (rebuild.ts): the
 * rebuild of a user whose index it has just dropped, while no other write touches that index.
 * Each transaction writes only the chunks that filled (`CHUNK_POSTINGS` postings); a term's
 * newest postings stay here until the last one, so a term is written about once for the
 * whole rebuild, not once a transaction, and its tail is never read back.
 *
 * What is stored stays a valid index at every commit, only behind: a term's lists are its
 * full chunks, the last of them at its tail key (so a write that came anyway, which the
 * rebuild detects and starts over for, finds the tail it expects); a search while it runs
 * finds the rows of the full chunks, not yet those of the tails. The final layout is the
 * one `addDocuments` leaves: full chunks at their first doc, the rest (1 to `CHUNK_POSTINGS`
 * postings) as the tail.
 */
interface TermRun {
  /** Postings not written yet, ascending (`doc, tf, len` after one another). */
  run: PostingRun;
  /** The full chunk last written at the term's tail key, if any. */
  tail: Buffer | undefined;
}

export class HeldPostings {
  private readonly byTerm = new Map<string, TermRun>();
  private lastDoc = -1;
  /** Documents and their tokens added since the totals were last written. */
  private docs = 0;
  private length = 0;

  /** Adds a document above every one before; false (nothing added) for one that is not. */
  add(doc: number, { terms, tfs, length }: TermArrays): boolean {
    if (doc <= this.lastDoc) return false;
    this.lastDoc = doc;
    if (terms.length === 0) return true;
    this.docs++;
    this.length += length;
    for (let i = 0; i < terms.length; i++) {
      const term = terms[i]!;
      const held = this.byTerm.get(term);
      if (held) held.run.push(doc, tfs[i]!, length);
      else this.byTerm.set(term, { run: [doc, tfs[i]!, length], tail: undefined });
    }
    return true;
  }

  /** Inside a write transaction: the chunks that filled, the last of each term's as its tail; the rest stays here. */
  writeFull(search: SearchDbs, userId: string): void {
    const full = [...this.byTerm.keys()].filter((term) => this.byTerm.get(term)!.run.length >= CHUNK_POSTINGS * 3);
    // In key order: neighbouring keys share pages.
    for (const term of full.sort()) {
      const held = this.byTerm.get(term)!;
      const { run } = held;
      if (held.tail) search.postings.put([userId, term, chunkFirstDoc(held.tail)], held.tail);
      const chunks = Math.floor(run.length / 3 / CHUNK_POSTINGS);
      for (let c = 0; c < chunks - 1; c++) search.postings.put([userId, term, run[c * CHUNK_POSTINGS * 3]!], encodeRun(run, c * CHUNK_POSTINGS, (c + 1) * CHUNK_POSTINGS));
      held.tail = encodeRun(run, (chunks - 1) * CHUNK_POSTINGS, chunks * CHUNK_POSTINGS);
      search.postings.put([userId, term, TAIL], held.tail);
      held.run = run.slice(chunks * CHUNK_POSTINGS * 3);
    }
    this.writeTotals(search, userId);
  }

  /** Inside the rebuild's last write transaction: everything held. */
  writeAll(search: SearchDbs, userId: string): void {
    for (const term of [...this.byTerm.keys()].sort()) {
      const { run, tail } = this.byTerm.get(term)!;
      if (run.length === 0) continue;
      if (tail) search.postings.put([userId, term, chunkFirstDoc(tail)], tail);
      putNewChunks(search, userId, term, run);
    }
    this.byTerm.clear();
    this.writeTotals(search, userId);
  }

  private writeTotals(search: SearchDbs, userId: string): void {
    countDocuments(search, userId, this.docs, this.length);
    this.docs = 0;
    this.length = 0;
  }
}
