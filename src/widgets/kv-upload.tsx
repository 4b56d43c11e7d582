// `kv-upload`: uploads a text file of items into a list or address book in parts (the multipart upload
// of the key-value store), with a progress bar. The file is dropped on the drop zone or chosen with its
// button (the file input itself is visually hidden); its name and size show before it is sent. A failed
// part is tried again (3 times, each with a new part URL); after that the upload waits with a Resume
// button that goes on from that part. Cancel aborts the upload, which deletes its parts. Options (each
// operation as `{ "mutation" }`):
//   initiate   InitiateListUpload or InitiateAddressBookUpload, called with { input: { key, size } }
//              (the service refuses a file too large there, before any part is sent)
//   partUrl    KvUploadPartUrl, called with { input: { uploadId, partNumber } }
//   complete   CompleteKvUpload, called with { uploadId }; `refresh` names the queries to fetch again
//   abort      AbortKvUpload, called with { uploadId }
//   keyParam   the route parameter holding the key; without it the widget asks for one
//   noun       what the file holds ("items", "addresses")
import { FileTextOutlined, InboxOutlined } from "@ant-design/icons";
import { Alert, Button, Input, Popconfirm, Progress, Space, Typography } from "antd";
import { type DragEvent, useRef, useState } from "react";
import { useRefresh } from "../../renderer/data.tsx";
import { formatBytes } from "../../renderer/format.ts";
import { type CustomViewProps, can, errorMessage, useData, useFeedback } from "../../renderer/index.ts";
import { operationOf, refreshOf, useRun } from "./stream-parts.tsx";

/** What the file input offers; a dropped file is held to the same (the input's `accept` does not see drops). */
const ACCEPT = ".txt,.csv,text/plain,text/csv";
const isTextFile = (file: File) =>
  /\.(txt|csv)$/i.test(file.name) || file.type === "text/plain" || file.type === "text/csv";

/** Small parts to this service (a failed one costs little to send again); larger ones to S3 (fewer requests). */
const partSizeFor = (bucket: string) => (bucket === "local" ? 1024 * 1024 : 8 * 1024 * 1024);
const TRIES_PER_PART = 3;

interface Upload {
  uploadId: string;
  key: string;
  bucket: string;
  file: File;
  partSize: number;
  parts: number;
  /** Parts 1..donePart are stored. */
  donePart: number;
}

type Phase =
  | { name: "idle" }
  | { name: "uploading"; upload: Upload; loaded: number }
  | { name: "paused"; upload: Upload; error: string }
  | { name: "completing"; upload: Upload }
  | { name: "done"; key: string; addedCount: number }
  /** `title` says what became of the file; `error` is the service's reason, with what to do. */
  | { name: "failed"; title: string; error: string };

/** Why a part was refused: the service's own words (`{ error }`) when it gave them, else the HTTP status. */
function refusalOf(status: number, body: string): string {
  try {
    const answer = JSON.parse(body) as { error?: unknown };
    if (typeof answer.error === "string") return answer.error;
  } catch {
    // Not this service's JSON (S3 answers XML): the status is all there is to say.
  }
  return `The part was refused (HTTP ${status}).`;
}

/** PUTs one part with progress; rejects on a network error or a status that is not 2xx. */
function putPart(url: string, body: Blob, onProgress: (loaded: number) => void, signal: AbortSignal) {
  return new Promise<void>((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open("PUT", url);
    xhr.upload.onprogress = (event) => onProgress(event.loaded);
    xhr.onload = () =>
      xhr.status >= 200 && xhr.status < 300 ? resolve() : reject(new Error(refusalOf(xhr.status, xhr.responseText)));
    xhr.onerror = () => reject(new Error("The connection failed while sending a part."));
    xhr.onabort = () => reject(new DOMException("Cancelled", "AbortError"));
    signal.addEventListener("abort", () => xhr.abort(), { once: true });
    xhr.send(body);
  });
}

const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export function KvUpload({ options, scope }: CustomViewProps) {
  const { viewer } = useData();
  const run = useRun();
  const refresh = useRefresh();
  const { message } = useFeedback();
  const keyParam = typeof options.keyParam === "string" ? options.keyParam : null;
  const routeKey = keyParam ? (scope.route?.[keyParam] ?? "") : "";
  const noun = typeof options.noun === "string" ? options.noun : "items";
  const [typedKey, setTypedKey] = useState("");
  const [file, setFile] = useState<File | null>(null);
  const [phase, setPhase] = useState<Phase>({ name: "idle" });
  const [dragging, setDragging] = useState(false);
  const controller = useRef<AbortController | null>(null);
  const inputRef = useRef<HTMLInputElement>(null);
  const key = keyParam ? routeKey : typedKey.trim();

  if (!can(viewer.userRole, "ADMIN"))
    return <Typography.Text type="secondary">Uploading {noun} needs the Admin role.</Typography.Text>;

  const mutation = (name: string) => {
    const operation = operationOf(options[name]);
    if (!operation) throw new Error(`The upload widget has no ${name} operation.`);
    return operation;
  };

  const complete = async (upload: Upload) => {
    setPhase({ name: "completing", upload });
    try {
      const answer = (await run(mutation("complete"), { uploadId: upload.uploadId })) as {
        completeKvUpload: { key: string; addedCount: number };
      };
      setPhase({ name: "done", ...answer.completeKvUpload });
      setFile(null);
      if (inputRef.current) inputRef.current.value = "";
      await refresh(refreshOf(options.complete));
    } catch (error) {
      // A file that cannot be read (a bad line, more items than the plan allows) will not get better: the
      // upload is ended and its parts deleted.
      await run(mutation("abort"), { uploadId: upload.uploadId }).catch(() => undefined);
      setPhase({
        name: "failed",
        title: `Nothing was added from ${upload.file.name}`,
        error: errorMessage(error),
      });
    }
  };

  /** Sends the parts after `upload.donePart`, trying each a few times, then completes. */
  const sendFrom = async (start: Upload) => {
    const upload = { ...start };
    const abort = new AbortController();
    controller.current = abort;
    for (let part = upload.donePart + 1; part <= upload.parts; part++) {
      const body = upload.file.slice((part - 1) * upload.partSize, part * upload.partSize);
      const before = (part - 1) * upload.partSize;
      let lastError: unknown = null;
      for (let attempt = 1; attempt <= TRIES_PER_PART; attempt++) {
        try {
          const answer = (await run(mutation("partUrl"), {
            input: { uploadId: upload.uploadId, partNumber: part },
          })) as {
            kvUploadPartUrl: { url: string };
          };
          await putPart(
            answer.kvUploadPartUrl.url,
            body,
            (loaded) => setPhase({ name: "uploading", upload, loaded: before + loaded }),
            abort.signal,
          );
          lastError = null;
          break;
        } catch (error) {
          if (abort.signal.aborted) return;
          lastError = error;
          if (attempt < TRIES_PER_PART) await wait(500 * attempt);
        }
      }
      if (lastError) {
        setPhase({ name: "paused", upload, error: errorMessage(lastError) });
        return;
      }
      upload.donePart = part;
      setPhase({ name: "uploading", upload, loaded: part * upload.partSize });
    }
    await complete(upload);
  };

  const start = async () => {
    if (!file) return;
    try {
      // The size goes with initiate, so the service refuses a file too large before any part is sent.
      const answer = (await run(mutation("initiate"), { input: { key, size: file.size } })) as Record<
        string,
        { uploadId: string; key: string; bucket: string }
      >;
      const begun = Object.values(answer)[0];
      const partSize = partSizeFor(begun.bucket);
      const upload: Upload = {
        ...begun,
        file,
        partSize,
        parts: Math.max(1, Math.ceil(file.size / partSize)),
        donePart: 0,
      };
      setPhase({ name: "uploading", upload, loaded: 0 });
      await sendFrom(upload);
    } catch (error) {
      setPhase({ name: "failed", title: `${file.name} cannot be uploaded`, error: errorMessage(error) });
    }
  };

  const cancel = async (upload: Upload) => {
    controller.current?.abort();
    try {
      await run(mutation("abort"), { uploadId: upload.uploadId });
      message.info("Upload cancelled; its parts were deleted.");
      setPhase({ name: "idle" });
    } catch (error) {
      setPhase({ name: "failed", title: "The upload could not be cancelled", error: errorMessage(error) });
    }
  };

  const active = phase.name === "uploading" || phase.name === "paused" || phase.name === "completing";
  const upload = active ? phase.upload : null;
  const loaded =
    phase.name === "uploading"
      ? Math.min(phase.loaded, phase.upload.file.size)
      : (upload?.donePart ?? 0) * (upload?.partSize ?? 0);
  const percent = upload ? Math.floor((100 * Math.min(loaded, upload.file.size)) / Math.max(1, upload.file.size)) : 0;

  const choose = (chosen: File | null) => {
    setFile(chosen);
    setPhase({ name: "idle" });
  };
  const onDragOver = (event: DragEvent<HTMLDivElement>) => {
    if (!event.dataTransfer.types.includes("Files")) return;
    // Taken even while uploading, as a drop of nothing: else the browser opens the file in place of the console.
    event.preventDefault();
    event.dataTransfer.dropEffect = active ? "none" : "copy";
    if (!active) setDragging(true);
  };
  const onDragLeave = (event: DragEvent<HTMLDivElement>) => {
    // Leaving for one of the zone's own children is not leaving the zone.
    if (!event.currentTarget.contains(event.relatedTarget as Node | null)) setDragging(false);
  };
  const onDrop = (event: DragEvent<HTMLDivElement>) => {
    event.preventDefault();
    setDragging(false);
    if (active) return;
    const dropped = event.dataTransfer.files[0];
    if (!dropped) return;
    if (!isTextFile(dropped)) {
      setPhase({
        name: "failed",
        title: `${dropped.name} cannot be uploaded`,
        error: "Drop a text file (.txt or .csv) with one entry per line or entries separated by commas.",
      });
      return;
    }
    if (inputRef.current) inputRef.current.value = "";
    choose(dropped);
  };
  const openPicker = () => inputRef.current?.click();

  return (
    <Space orientation="vertical" style={{ width: "100%" }} data-widget="kv-upload">
      {!keyParam && (
        <Input
          aria-label="Key to upload into"
          placeholder="Key, e.g. watched_addresses"
          value={typedKey}
          disabled={active}
          onChange={(event) => setTypedKey(event.target.value)}
          style={{ maxWidth: 360 }}
        />
      )}
      {/* The zone takes a drop or a click anywhere; its button is the keyboard's way in, so the zone is no tab stop. */}
      {/* biome-ignore lint/a11y/noStaticElementInteractions: the button inside is the accessible control */}
      {/* biome-ignore lint/a11y/useKeyWithClickEvents: the button inside is the accessible control */}
      <div
        className="np-dropzone"
        data-dragging={dragging || undefined}
        data-chosen={file ? true : undefined}
        data-disabled={active || undefined}
        onDragEnter={onDragOver}
        onDragOver={onDragOver}
        onDragLeave={onDragLeave}
        onDrop={onDrop}
        onClick={(event) => {
          if (!active && !(event.target as HTMLElement).closest("button, input")) openPicker();
        }}
      >
        <input
          ref={inputRef}
          className="np-sr-only"
          type="file"
          tabIndex={-1}
          aria-label="File to upload"
          accept={ACCEPT}
          disabled={active}
          onChange={(event) => choose(event.target.files?.[0] ?? null)}
        />
        {file ? (
          <div className="np-dropzone-file">
            <FileTextOutlined className="np-dropzone-file-icon" aria-hidden />
            <div className="np-dropzone-file-text">
              <span className="np-dropzone-file-name" title={file.name}>
                {file.name}
              </span>
              <span className="np-muted">{formatBytes(file.size)}</span>
            </div>
            {!active && (
              <Button size="small" onClick={openPicker}>
                Change file
              </Button>
            )}
            {upload && phase.name !== "completing" && (
              <Popconfirm
                title="Cancel this upload?"
                description="The parts sent so far are deleted and nothing is added."
                okText="Cancel upload"
                cancelText="Keep uploading"
                okButtonProps={{ danger: true }}
                onConfirm={() => cancel(upload)}
              >
                <Button size="small" danger>
                  Cancel upload
                </Button>
              </Popconfirm>
            )}
          </div>
        ) : (
          <>
            <InboxOutlined className="np-dropzone-icon" aria-hidden />
            <span className="np-dropzone-title">
              Drop a file here or{" "}
              <button type="button" className="np-dropzone-choose" onClick={openPicker}>
                choose one
              </button>
            </span>
            <span className="np-muted np-dropzone-hint">
              A .txt or .csv file with one entry per line or entries separated by commas. It is sent in parts; the{" "}
              {noun} are added all at once when every part has arrived
              {keyParam ? "" : ", to the key you name (made if it is new)"}.
            </span>
          </>
        )}
        {upload && (
          <div role="status" aria-live="polite" className="np-dropzone-progress">
            <Progress
              percent={percent}
              status={phase.name === "paused" ? "exception" : phase.name === "completing" ? "success" : "active"}
              aria-label={`Upload progress ${percent}%`}
            />
            <Typography.Text type="secondary">
              {phase.name === "completing"
                ? `Adding the ${noun} to ${upload.key}…`
                : `Part ${Math.min(upload.donePart + 1, upload.parts)} of ${upload.parts} · ${formatBytes(Math.min(loaded, upload.file.size))} of ${formatBytes(upload.file.size)}`}
            </Typography.Text>
          </div>
        )}
      </div>
      {!active && (
        <Button type="primary" disabled={!file || !key} onClick={() => void start()}>
          Upload
        </Button>
      )}
      {phase.name === "paused" && (
        <Alert
          type="warning"
          showIcon
          title={`Part ${phase.upload.donePart + 1} could not be sent: ${phase.error}`}
          description="The parts sent so far are kept. Resume goes on from this part."
          action={
            <Button size="small" onClick={() => void sendFrom(phase.upload)}>
              Resume
            </Button>
          }
        />
      )}
      {phase.name === "done" && (
        <Alert
          type="success"
          showIcon
          title={`Added ${phase.addedCount.toLocaleString("en-US")} ${noun} to ${phase.key}.`}
        />
      )}
      {phase.name === "failed" && <Alert type="error" showIcon title={phase.title} description={phase.error} />}
    </Space>
  );
}
