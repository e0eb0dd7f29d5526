// A small client typed by the types openapi-typescript generates from the example site's document
// (generated/api.ts): it lists articles, pages through them by cursor, and creates one with an
// Idempotency-Key. tests/openapi/test_generated_clients.py compiles it with `tsc --strict`.
import type { components, paths } from "./generated/api";

type ListQuery = NonNullable<paths["/objects/articles"]["get"]["parameters"]["query"]>;
type ListAnswer = paths["/objects/articles"]["get"]["responses"][200]["content"]["application/json"];
type CreateBody = paths["/objects/articles"]["post"]["requestBody"]["content"]["application/json"];
type Created = paths["/objects/articles"]["post"]["responses"][201]["content"]["application/json"];
type ApiError = components["schemas"]["Error"];
export type Article = components["schemas"]["articles.Record"];

export class ArticlesClient {
  constructor(
    private readonly base: string,
    private readonly token: string,
  ) {}

  async list(query: ListQuery = {}): Promise<ListAnswer> {
    const search = new URLSearchParams();
    for (const [name, value] of Object.entries(query)) {
      if (typeof value === "string" || typeof value === "number") search.set(name, String(value));
    }
    const answer = await fetch(`${this.base}/objects/articles?${search}`, { headers: this.headers() });
    return (await this.json(answer)) as ListAnswer;
  }

  /** Every article, in `sort` order, following `meta.next_cursor` until it is null. */
  async *everyArticle(sort = "id", limit = 20): AsyncGenerator<Article> {
    let after: string | null = null;
    do {
      const query: ListQuery = after === null ? { sort, limit } : { sort, limit, after };
      const page: ListAnswer = await this.list(query);
      yield* page.data;
      after = page.meta.next_cursor;
    } while (after !== null);
  }

  /** Creates once, however often a lost answer makes the caller send it again with the same key. */
  async create(body: CreateBody, idempotencyKey: string): Promise<{ created: Created; replayed: boolean }> {
    const answer = await fetch(`${this.base}/objects/articles`, {
      method: "POST",
      headers: { ...this.headers(), "Content-Type": "application/json", "Idempotency-Key": idempotencyKey },
      body: JSON.stringify(body),
    });
    const created = (await this.json(answer)) as Created;
    return { created, replayed: answer.headers.get("Idempotent-Replayed") === "true" };
  }

  private headers(): Record<string, string> {
    return { Authorization: `Bearer ${this.token}` };
  }

  private async json(answer: Response): Promise<unknown> {
    const body: unknown = await answer.json();
    if (!answer.ok) {
      const error = body as ApiError;
      throw new Error(`${answer.status} ${error.error}: ${error.message}`);
    }
    return body;
  }
}

export async function titles(client: ArticlesClient): Promise<string[]> {
  const found: string[] = [];
  for await (const article of client.everyArticle("id", 2)) {
    found.push(article.title ?? "");
  }
  return found;
}
