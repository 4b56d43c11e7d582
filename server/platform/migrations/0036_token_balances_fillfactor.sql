-- Custom SQL migration (drizzle-kit cannot declare a table's storage parameters): half of each page of
-- token_balances left free, so the index's upsert of a holder's sums is a HOT update on the same page
-- (no new index entry, ~30% of the WAL). docs/decisions/1940-token-balances-fillfactor.md
ALTER TABLE "token_balances" SET (fillfactor = 50);
