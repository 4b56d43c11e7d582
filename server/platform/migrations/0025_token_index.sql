CREATE TABLE "nft_holding_changes" (
	"network" text NOT NULL,
	"range_end" bigint NOT NULL,
	"token" text NOT NULL,
	"token_id" numeric(78, 0) NOT NULL,
	"owner" text NOT NULL,
	"amount" numeric(78, 0) NOT NULL
);
--> statement-breakpoint
CREATE TABLE "nft_holdings" (
	"network" text NOT NULL,
	"token" text NOT NULL,
	"token_id" numeric(78, 0) NOT NULL,
	"owner" text NOT NULL,
	"amount" numeric(78, 0) NOT NULL,
	CONSTRAINT "nft_holdings_network_token_token_id_owner_pk" PRIMARY KEY("network","token","token_id","owner")
);
--> statement-breakpoint
CREATE TABLE "token_balance_changes" (
	"network" text NOT NULL,
	"range_end" bigint NOT NULL,
	"owner" text NOT NULL,
	"token" text NOT NULL,
	"quantity_in" numeric(78, 0) NOT NULL,
	"quantity_out" numeric(78, 0) NOT NULL
);
--> statement-breakpoint
CREATE TABLE "token_balances" (
	"network" text NOT NULL,
	"owner" text NOT NULL,
	"token" text NOT NULL,
	"quantity_in" numeric(78, 0) NOT NULL,
	"quantity_out" numeric(78, 0) NOT NULL,
	CONSTRAINT "token_balances_network_owner_token_pk" PRIMARY KEY("network","owner","token")
);
--> statement-breakpoint
CREATE TABLE "token_contracts" (
	"network" text NOT NULL,
	"address" text NOT NULL,
	"standard" text NOT NULL,
	"name" text,
	"symbol" text,
	"decimals" integer,
	"first_block" bigint NOT NULL,
	CONSTRAINT "token_contracts_network_address_pk" PRIMARY KEY("network","address")
);
--> statement-breakpoint
CREATE TABLE "token_index_checkpoints" (
	"network" text NOT NULL,
	"block_number" bigint NOT NULL,
	"block_hash" text NOT NULL,
	CONSTRAINT "token_index_checkpoints_network_block_number_pk" PRIMARY KEY("network","block_number")
);
--> statement-breakpoint
CREATE TABLE "token_index_cursors" (
	"network" text PRIMARY KEY NOT NULL,
	"block_number" bigint NOT NULL,
	"block_hash" text NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE INDEX "nft_holding_changes_range" ON "nft_holding_changes" USING btree ("network","range_end");--> statement-breakpoint
CREATE INDEX "nft_holdings_owner" ON "nft_holdings" USING btree ("network","owner","token","token_id");--> statement-breakpoint
CREATE INDEX "nft_holdings_token_owner" ON "nft_holdings" USING btree ("network","token","owner");--> statement-breakpoint
CREATE INDEX "token_balance_changes_range" ON "token_balance_changes" USING btree ("network","range_end");