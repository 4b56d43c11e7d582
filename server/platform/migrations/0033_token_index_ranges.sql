CREATE TABLE "token_index_ranges" (
	"network" text NOT NULL,
	"block_number" bigint NOT NULL,
	"block_hash" text NOT NULL,
	"owners" text[] NOT NULL,
	"tokens" text[] NOT NULL,
	"quantities_in" numeric(78, 0)[] NOT NULL,
	"quantities_out" numeric(78, 0)[] NOT NULL,
	"nft_tokens" text[] NOT NULL,
	"nft_token_ids" numeric(78, 0)[] NOT NULL,
	"nft_owners" text[] NOT NULL,
	"nft_amounts" numeric(78, 0)[] NOT NULL,
	CONSTRAINT "token_index_ranges_network_block_number_pk" PRIMARY KEY("network","block_number")
);
