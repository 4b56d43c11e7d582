import { expect, it } from "vitest";
import { redact, secretsOf } from "../../../server/dataplane/destinations/common.ts";
import type { DestinationAttributes } from "../../../server/dataplane/destinations/index.ts";

it("cuts a SAS token out of messages, also one whose percent-encoding is malformed (it ended the stream)", () => {
  const attrs = { type: "AZURE", sasToken: "?sv=2024&sig=abc%zzdefgh" } as unknown as DestinationAttributes;
  const secrets = secretsOf(attrs);
  expect(redact("PUT failed: https://acct.blob/x?sv=2024&sig=abc%zzdefgh", secrets)).not.toContain("abc%zz");
});
