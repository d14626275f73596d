import { DatabaseSync } from "node:sqlite";
import { Kysely, sql } from "kysely";
import { describe, expect, it } from "vitest";
import { createNodeSqliteDialect } from "../src/index.js";

const open = (options: { readBigInts?: boolean } = {}) =>
  new Kysely<any>({ dialect: createNodeSqliteDialect(new DatabaseSync(":memory:", options)) });

describe("createNodeSqliteDialect", () => {
  it("rolls a failed transaction back", async () => {
    const db = open();
    await db.schema
      .createTable("t")
      .addColumn("id", "integer", (c) => c.primaryKey())
      .execute();
    const failed = db.transaction().execute(async (trx) => {
      await trx.insertInto("t").values({ id: 1 }).execute();
      await trx.insertInto("t").values({ id: 1 }).execute();
    });
    await expect(failed).rejects.toThrow(/UNIQUE constraint failed/);
    expect(await db.selectFrom("t").selectAll().execute()).toEqual([]);
  });

  it("serializes the single connection: a query waits for an open transaction to finish", async () => {
    const db = open();
    await db.schema.createTable("t").addColumn("id", "integer").execute();
    const seen: number[] = [];
    const transaction = db.transaction().execute(async (trx) => {
      await trx.insertInto("t").values({ id: 1 }).execute();
      await new Promise((resolve) => setTimeout(resolve, 50));
      await trx.insertInto("t").values({ id: 2 }).execute();
    });
    const outside = db
      .selectFrom("t")
      .select("id")
      .execute()
      .then((rows) => seen.push(rows.length));
    await Promise.all([transaction, outside]);
    expect(seen).toEqual([2]);
  });

  it("binds booleans and dates, returns affected rows and maps safe bigints to numbers", async () => {
    const db = open({ readBigInts: true });
    await db.schema.createTable("t").addColumn("n", "integer").addColumn("s", "text").execute();
    const result = await db
      .insertInto("t")
      .values([
        { n: true, s: new Date(0) },
        { n: 2n ** 40n, s: "x" },
      ])
      .executeTakeFirst();
    expect(result.numInsertedOrUpdatedRows).toBe(2n);
    expect(await db.selectFrom("t").selectAll().orderBy("n").execute()).toEqual([
      { n: 1, s: "1970-01-01T00:00:00.000Z" },
      { n: 2 ** 40, s: "x" },
    ]);
    expect((await sql<{ v: number }>`select 1 as v`.execute(db)).rows).toEqual([{ v: 1 }]);
  });
});
