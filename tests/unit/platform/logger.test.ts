import { DrizzleQueryError } from "drizzle-orm";
import pg from "pg";
import { describe, expect, it } from "vitest";
import { createLogger } from "../../../server/platform/logger.ts";

function capture() {
  const lines: string[] = [];
  const log = createLogger("debug", { write: (line: string) => void lines.push(line) });
  return { log, text: () => lines.join("") };
}

const passwordHash = "$argon2id$v=19$m=19456,t=2,p=1$c2FsdHNhbHQ$aGFzaGhhc2hoYXNo";
const email = "someone-4711@example.com";

/** A failed insert as Drizzle reports it: the statement, its parameters, and pg's error with the failing row. */
function failedInsert() {
  const cause = new pg.DatabaseError('new row for relation "users" violates check constraint "probe"', 120, "error");
  cause.code = "23514";
  cause.detail = `Failing row contains (1, ${email}, ${passwordHash}).`;
  cause.where = `SQL statement "insert into users values ('${email}')"`;
  cause.internalQuery = `select '${passwordHash}'`;
  return new DrizzleQueryError(
    'insert into "users" ("email", "password_hash") values ($1, $2)',
    [email, passwordHash],
    cause,
  );
}

describe("the service's logger", () => {
  it("logs a failed statement's text and error, never its parameters or the failing row, however the error is passed", () => {
    const { log, text } = capture();
    log.error(failedInsert());
    log.error({ err: failedInsert() }, "insert failed");
    log.warn({ err: failedInsert() });
    log.warn({ error: failedInsert(), nested: { failures: [failedInsert()] } }, "as another field");
    const out = text();
    expect(out).not.toContain("$argon2");
    expect(out).not.toContain(email);
    expect(out).not.toContain("Failing row");
    expect(out).not.toMatch(/"params"|"detail"|"where"|"internalQuery"/);
    // What the operator needs stays: which statement, which error, which code.
    expect(out).toContain('insert into \\"users\\" (\\"email\\", \\"password_hash\\") values ($1, $2)');
    expect(out).toContain("violates check constraint");
    expect(out).toContain('"code":"23514"');
    expect(out).toContain('"type":"DrizzleQueryError"');
    expect(out.split("\n").filter(Boolean)).toHaveLength(4);
  });

  it("redacts any field named like a secret, at any depth", () => {
    const { log, text } = capture();
    const values = {
      password: "pw-top-1",
      user: { passwordHash, currentPassword: "pw-current-2" },
      destination: { attributes: [{ secretKey: "sk-3", sasToken: "sas-4", apiKey: "ak-5", privateKey: "pk-6" }] },
      headers: { authorization: "Bearer tok-7", cookie: "np_session=cookie-8" },
      connectionString: "postgres://u:pw-9@db/x",
      token: "tok-10",
      webhookSecret: "whs-11",
    };
    log.info(values, "settings");
    const out = text();
    for (const secret of [
      "pw-top-1",
      "$argon2",
      "pw-current-2",
      "sk-3",
      "sas-4",
      "ak-5",
      "pk-6",
      "tok-7",
      "cookie-8",
      "pw-9",
      "tok-10",
      "whs-11",
    ]) {
      expect(out, secret).not.toContain(secret);
    }
    expect(out).toContain('"msg":"settings"');
    expect(out).toContain("[redacted]");
  });
});
