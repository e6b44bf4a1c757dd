export interface Slice<T> {
  rows: T[];
  hasMore: boolean;
}

/**
 * One page of a list ordered by `seq`, the cursor being the id of the last object the client saw.
 * `seqOf` looks the cursor up in the caller's scope, so another tenant's id is as unknown as a made-up
 * one: the result is undefined. `rowsAfter` reads `take` rows past the cursor's seq in the list's
 * direction; one more row than the limit tells whether there is a next page.
 */
export async function sliceBySeq<T>(
  query: { limit: number; startingAfter?: string },
  seqOf: (id: string) => Promise<{ seq: bigint } | null>,
  rowsAfter: (cursorSeq: bigint | undefined, take: number) => Promise<T[]>,
): Promise<Slice<T> | undefined> {
  let cursorSeq: bigint | undefined;
  if (query.startingAfter !== undefined) {
    const cursor = await seqOf(query.startingAfter);
    if (cursor === null) return undefined;
    cursorSeq = cursor.seq;
  }
  const rows = await rowsAfter(cursorSeq, query.limit + 1);
  return { rows: rows.slice(0, query.limit), hasMore: rows.length > query.limit };
}
