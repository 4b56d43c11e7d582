CREATE SEQUENCE "public"."kv_versions" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1;--> statement-breakpoint
CREATE TABLE "kv_collections" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"account_id" uuid NOT NULL,
	"kind" text NOT NULL,
	"key" text NOT NULL,
	"item_count" integer DEFAULT 0 NOT NULL,
	"version" bigint DEFAULT nextval('kv_versions') NOT NULL,
	"next_position" bigint DEFAULT 0 NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "kv_helper_writes" (
	"account_id" uuid NOT NULL,
	"day" date NOT NULL,
	"calls" bigint DEFAULT 0 NOT NULL,
	"items" bigint DEFAULT 0 NOT NULL,
	CONSTRAINT "kv_helper_writes_account_id_day_pk" PRIMARY KEY("account_id","day")
);
--> statement-breakpoint
CREATE TABLE "kv_list_items" (
	"collection_id" uuid NOT NULL,
	"account_id" uuid NOT NULL,
	"position" bigint NOT NULL,
	"item" text NOT NULL,
	CONSTRAINT "kv_list_items_collection_id_position_pk" PRIMARY KEY("collection_id","position")
);
--> statement-breakpoint
CREATE TABLE "kv_set_items" (
	"collection_id" uuid NOT NULL,
	"account_id" uuid NOT NULL,
	"item" text NOT NULL,
	CONSTRAINT "kv_set_items_collection_id_item_pk" PRIMARY KEY("collection_id","item")
);
--> statement-breakpoint
CREATE TABLE "kv_uploads" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"account_id" uuid NOT NULL,
	"kind" text NOT NULL,
	"key" text NOT NULL,
	"bucket" text NOT NULL,
	"object_prefix" text,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"expires_at" timestamp (3) with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "kv_values" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"account_id" uuid NOT NULL,
	"key" text NOT NULL,
	"value" text NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "kv_collections" ADD CONSTRAINT "kv_collections_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "kv_helper_writes" ADD CONSTRAINT "kv_helper_writes_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "kv_list_items" ADD CONSTRAINT "kv_list_items_collection_id_kv_collections_id_fk" FOREIGN KEY ("collection_id") REFERENCES "public"."kv_collections"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "kv_list_items" ADD CONSTRAINT "kv_list_items_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "kv_set_items" ADD CONSTRAINT "kv_set_items_collection_id_kv_collections_id_fk" FOREIGN KEY ("collection_id") REFERENCES "public"."kv_collections"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "kv_set_items" ADD CONSTRAINT "kv_set_items_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "kv_uploads" ADD CONSTRAINT "kv_uploads_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "kv_values" ADD CONSTRAINT "kv_values_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "kv_collections_account_key_idx" ON "kv_collections" USING btree ("account_id","key");--> statement-breakpoint
CREATE INDEX "kv_list_items_item_idx" ON "kv_list_items" USING btree ("collection_id","item");--> statement-breakpoint
CREATE INDEX "kv_uploads_account_idx" ON "kv_uploads" USING btree ("account_id","created_at");--> statement-breakpoint
CREATE UNIQUE INDEX "kv_values_account_key_idx" ON "kv_values" USING btree ("account_id","key");