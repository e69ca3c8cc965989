/**
 * Conversions between store events and journal records.
 * @module
 */

import type { KeyValue, StoreEvent } from "../store.ts";
import type { JournalRecord } from "./record.ts";

/** The record that makes `event` durable. */
export function eventToRecord(event: StoreEvent, time: number): JournalRecord {
  const { kv, prevKv } = event;
  return {
    type: event.type,
    revision: event.revision,
    key: kv.key,
    value: event.type === "put" ? kv.value : "",
    createRevision: kv.createRevision,
    prevModRevision: prevKv?.modRevision ?? 0,
    prevValue: prevKv?.value ?? "",
    time,
  };
}

/** The event a record stands for, with `prevKv` rebuilt from the record alone. */
export function recordToEvent(rec: JournalRecord): StoreEvent {
  const prevKv: KeyValue | undefined = rec.prevModRevision > 0
    ? Object.freeze({
      key: rec.key,
      value: rec.prevValue,
      createRevision: rec.createRevision,
      modRevision: rec.prevModRevision,
    })
    : undefined;
  if (rec.type === "delete") {
    if (!prevKv) throw new Error(`Delete record of revision ${rec.revision} has no previous value`);
    return {
      type: "delete",
      revision: rec.revision,
      kv: Object.freeze({ ...prevKv, modRevision: rec.revision }),
      prevKv,
    };
  }
  const kv = Object.freeze({
    key: rec.key,
    value: rec.value,
    createRevision: rec.createRevision,
    modRevision: rec.revision,
  });
  return prevKv
    ? { type: "put", revision: rec.revision, kv, prevKv }
    : { type: "put", revision: rec.revision, kv };
}
