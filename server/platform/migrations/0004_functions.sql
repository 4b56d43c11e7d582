CREATE TABLE "function_activations" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"function_id" uuid NOT NULL,
	"account_id" uuid NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"activation_source" text NOT NULL,
	"stream_id" uuid,
	"network" text,
	"dataset" text,
	"block_number" bigint,
	"duration_ms" double precision NOT NULL,
	"success" boolean NOT NULL,
	"size" integer NOT NULL,
	"result_preview" text,
	"error" text,
	"logs" jsonb NOT NULL
);
--> statement-breakpoint
CREATE TABLE "functions" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"account_id" uuid NOT NULL,
	"name" text NOT NULL,
	"description" text,
	"kind" text DEFAULT 'NODEJS' NOT NULL,
	"code" text NOT NULL,
	"timeout_sec" integer DEFAULT 10 NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "function_activations" ADD CONSTRAINT "function_activations_function_id_functions_id_fk" FOREIGN KEY ("function_id") REFERENCES "public"."functions"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "function_activations" ADD CONSTRAINT "function_activations_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "functions" ADD CONSTRAINT "functions_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "function_activations_function_idx" ON "function_activations" USING btree ("function_id","created_at");--> statement-breakpoint
CREATE INDEX "functions_account_idx" ON "functions" USING btree ("account_id","created_at");