-- Custom SQL migration (drizzle-kit cannot declare a column's storage): the kept changes of a range, arrays
-- of thousands of elements read back only by a rollback, are stored out of line without pglz compression,
-- which cost PostgreSQL ~0.75 ms of CPU per range row of 1,065 holders. docs/decisions/1941-token-index-ranges-stored-uncompressed.md
ALTER TABLE "token_index_ranges" ALTER COLUMN "owners" SET STORAGE EXTERNAL, ALTER COLUMN "tokens" SET STORAGE EXTERNAL, ALTER COLUMN "quantities_in" SET STORAGE EXTERNAL, ALTER COLUMN "quantities_out" SET STORAGE EXTERNAL, ALTER COLUMN "nft_tokens" SET STORAGE EXTERNAL, ALTER COLUMN "nft_token_ids" SET STORAGE EXTERNAL, ALTER COLUMN "nft_owners" SET STORAGE EXTERNAL, ALTER COLUMN "nft_amounts" SET STORAGE EXTERNAL;
