// A scripted app as an app developer writes one: openapi-fetch typed by what openapi-typescript made of a
// live server's /openapi.json (generated/api.ts), and the server's address and token
// (generated/target.ts, written by tests/openapi/test_client_apps.py). No `!`, no casts, no type of
// its own: every type comes from the document. It prints what it saw as one JSON line; the test
// compares that with the database.
import createClient from "openapi-fetch";
import type { components, paths } from "./generated/api.js";
import { BASE, TOKEN } from "./generated/target.js";

const api = createClient<paths>({ baseUrl: BASE, headers: { Authorization: `Bearer ${TOKEN}` } });

function fail(step: string, status: number, error: unknown): never {
  throw new Error(`${step}: HTTP ${status} ${JSON.stringify(error)}`);
}

async function listed() {
  // A filter, then page 2 by `page`: the document sends no `offset` the app did not ask for.
  const news = await api.GET("/objects/articles", { params: { query: { "filter[category]": "news", sort: "id" } } });
  if (news.data === undefined) fail("filter", news.response.status, news.error);
  const page = await api.GET("/objects/articles", { params: { query: { sort: "id", limit: 2, page: 2 } } });
  if (page.data === undefined) fail("page 2", page.response.status, page.error);
  const uncounted = await api.GET("/objects/articles", { params: { query: { count: "none", limit: 2 } } });
  if (uncounted.data === undefined) fail("count=none", uncounted.response.status, uncounted.error);
  return {
    filtered: news.data.data.map((article) => article.id),
    title_lengths: news.data.data.map((article) => article.title.length), // NOT NULL: a string, no `!`
    page_two: page.data.data.map((article) => article.id),
    page_two_offset: page.data.meta.offset,
    uncounted_total: uncounted.data.meta.total,
    uncounted_has_more: uncounted.data.meta.has_more,
  };
}

async function pageAfter(after: string | null) {
  const query = after === null ? { sort: "id", limit: 2 } : { sort: "id", limit: 2, after };
  const page = await api.GET("/objects/articles", { params: { query } });
  if (page.data === undefined) fail("cursor walk", page.response.status, page.error);
  return page.data;
}

async function walked() {
  // Every row once, following `meta.next_cursor` until it is null.
  const ids: number[] = [];
  const ignored: string[] = [];
  let page = await pageAfter(null);
  for (;;) {
    ids.push(...page.data.map((article) => article.id));
    ignored.push(...(page.meta.ignored ?? [])); // present only when something was dropped
    if (page.meta.next_cursor === null) break;
    page = await pageAfter(page.meta.next_cursor);
  }
  return { walked: ids, walk_ignored: ignored };
}

async function written(start: string) {
  const body = { title: "Written by the TypeScript app", body: "openapi-fetch" };
  const key = { "Idempotency-Key": "typescript-app-create" };
  const created = await api.POST("/objects/articles", { params: { header: key }, body });
  if (created.data === undefined) fail("create", created.response.status, created.error);
  const replayed = await api.POST("/objects/articles", { params: { header: key }, body });
  if (replayed.data === undefined) fail("replay", replayed.response.status, replayed.error);
  const id = created.data.data.id;
  const tag = created.response.headers.get("ETag");
  if (tag === null) throw new Error("a create answer without an ETag");
  const path = { id };
  const renamed = await api.PATCH("/objects/articles/{id}", {
    params: { path, header: { "If-Match": tag } },
    body: { title: "Renamed by the TypeScript app" },
  });
  if (renamed.data === undefined) fail("update with the current tag", renamed.response.status, renamed.error);
  const stale = await api.PATCH("/objects/articles/{id}", {
    params: { path, header: { "If-Match": tag } },
    body: { title: "Lost" },
  });
  const refused: components["schemas"]["Error"] | undefined = stale.error;
  if (refused === undefined) throw new Error("an update with a stale tag went through");
  const feed = await api.GET("/changes/articles", { params: { query: { since: start } } });
  if (feed.data === undefined) fail("changes", feed.response.status, feed.error);
  return {
    created: id,
    created_status: created.response.status,
    replayed: replayed.data.data.id,
    replayed_header: replayed.response.headers.get("Idempotent-Replayed"),
    renamed_status: renamed.response.status,
    renamed_title: renamed.data.data.title,
    stale_status: stale.response.status,
    stale_error: refused.error,
    changes: feed.data.data.map((entry) => [entry.op, entry.id, entry.record === null ? null : entry.record.title]),
  };
}

async function refused() {
  // An error answer decoded as the document's error envelope.
  const missing = await api.GET("/objects/articles/{id}", { params: { path: { id: 99999 } } });
  const envelope: components["schemas"]["Error"] | undefined = missing.error;
  if (envelope === undefined) throw new Error("a missing record was found");
  return { missing_status: missing.response.status, missing_error: envelope.error, missing_message: envelope.message };
}

async function batched() {
  // A batch creates a record with a label, renames it through `{ $ref: label }` as its `id` and deletes
  // another; then a batch that fails at its second operation writes nothing.
  const doomed = await api.POST("/objects/articles", { body: { title: "Doomed" } });
  if (doomed.data === undefined) fail("doomed", doomed.response.status, doomed.error);
  const deleted = doomed.data.data.id;
  const written = await api.POST("/batch", {
    body: {
      operations: [
        { op: "create", object: "articles", label: "draft", data: { title: "Batched by the TypeScript app", body: "typescript batch" } },
        { op: "update", object: "articles", id: { $ref: "draft" }, data: { title: "Renamed in the TypeScript batch" } },
        { op: "delete", object: "articles", id: deleted },
      ],
    },
  });
  if (written.data === undefined) fail("batch", written.response.status, written.error);
  const results = written.data.data;
  const created = results[0]?.data;
  const renamed = results[1]?.data;
  if (!created || !renamed) throw new Error(`batch: no record in ${JSON.stringify(results)}`);
  const refused = await api.POST("/batch", {
    body: {
      operations: [
        { op: "create", object: "articles", data: { title: "Never written by the TypeScript app", body: "typescript batch" } },
        { op: "update", object: "articles", id: 99999, data: { title: "Lost" } },
      ],
    },
  });
  const envelope: components["schemas"]["BatchError"] | undefined = refused.error;
  if (envelope === undefined) throw new Error("a batch updating a missing record went through");
  return {
    batch_statuses: results.map((result) => result.status),
    batch_created: created.id,
    batch_renamed: [renamed.id, renamed.title],
    batch_etags: results.map((result) => result.etag !== null),
    batch_deleted: deleted,
    failed_batch: [refused.response.status, envelope.error, envelope.operation],
  };
}

async function main() {
  const now = await api.GET("/changes/articles", {});
  if (now.data === undefined) fail("changes now", now.response.status, now.error);
  const report = { ...(await listed()), ...(await walked()), ...(await written(now.data.meta.next)), ...(await refused()), ...(await batched()) };
  console.log(JSON.stringify(report));
}

await main();
