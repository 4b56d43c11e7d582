-- A stream's runner learns at once that the stream was paused, changed or deleted, from any process:
-- every change of a stream's status or settings (its sequence), and its deletion, notifies this
-- channel with the stream's id (at commit). The engine listens; its heartbeat remains the fallback.
CREATE FUNCTION notify_stream_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'DELETE' THEN
    PERFORM pg_notify('nodeplane_stream_changed', OLD.id::text);
  ELSE
    PERFORM pg_notify('nodeplane_stream_changed', NEW.id::text);
  END IF;
  RETURN NULL;
END;
$$;
--> statement-breakpoint
CREATE TRIGGER streams_changed AFTER UPDATE OF status, sequence OR DELETE ON streams
  FOR EACH ROW EXECUTE FUNCTION notify_stream_changed();
