DROP TABLE "nft_holding_changes" CASCADE;--> statement-breakpoint
DROP TABLE "token_balance_changes" CASCADE;--> statement-breakpoint
DROP TABLE "token_index_checkpoints" CASCADE;