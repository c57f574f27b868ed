/** One page of a listing (docs/api.md pagination). */
export interface Page<T> {
  data: T[];
  next_cursor: string | null;
  has_more: boolean;
}

/**
 * Every item of a listing, page after page: `fetchPage` gets the cursor of the next page
 * (undefined for the first) and returns the page.
 */
export async function* paginate<T>(
  fetchPage: (cursor: string | undefined) => Promise<Page<T>>,
): AsyncGenerator<T> {
  for await (const page of pagesOf(fetchPage)) yield* page.data;
}

/** Every page of a listing, following next_cursor until has_more is false. */
export async function* pagesOf<P extends Page<unknown>>(
  fetchPage: (cursor: string | undefined) => Promise<P>,
): AsyncGenerator<P> {
  let cursor: string | undefined;
  for (;;) {
    const page = await fetchPage(cursor);
    yield page;
    if (!page.has_more || !page.next_cursor) return;
    cursor = page.next_cursor;
  }
}

/**
 * A listing, Stripe-style: awaited it is the first page; iterated with `for await` it is every
 * item of every page (fetched as needed); `pages()` iterates the pages themselves.
 */
export class PagedList<P extends Page<unknown>> implements PromiseLike<P> {
  constructor(private readonly fetchPage: (cursor: string | undefined) => Promise<P>) {}

  then<A = P, B = never>(
    onFulfilled?: ((page: P) => A | PromiseLike<A>) | null,
    onRejected?: ((reason: unknown) => B | PromiseLike<B>) | null,
  ): Promise<A | B> {
    return this.fetchPage(undefined).then(onFulfilled, onRejected);
  }

  pages(): AsyncGenerator<P> {
    return pagesOf(this.fetchPage);
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<P["data"][number]> {
    for await (const page of this.pages()) yield* page.data as P["data"][number][];
  }
}
