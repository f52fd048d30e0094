// Server-sent events read from a fetch() body. EventSource cannot POST or send an
// Authorization header, and asking a question is a POST, so the stream is parsed here
// (the text/event-stream rules: fields per line, an empty line ends an event, ':' is a comment).

const LINE_END = /\r\n|\n|\r(?=[^\n])/;

/** Yields {event, data, id} for each event; data is the raw text (the caller parses JSON). */
export async function* readEvents(body) {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  let finished = false;
  let event = { event: "message", data: [], id: null };
  try {
    while (!finished) {
      const { value, done } = await reader.read();
      if (done) {
        finished = true;
        buffer += decoder.decode() + "\n\n"; // a last event without its blank line still counts
      } else {
        buffer += decoder.decode(value, { stream: true });
      }
      let match;
      // One complete line at a time; a lone trailing "\r" may be half of "\r\n", so it waits.
      while ((match = LINE_END.exec(buffer)) !== null) {
        const line = buffer.slice(0, match.index);
        buffer = buffer.slice(match.index + match[0].length);
        if (line === "") {
          if (event.data.length) yield { event: event.event, data: event.data.join("\n"), id: event.id };
          event = { event: "message", data: [], id: event.id };
          continue;
        }
        if (line.startsWith(":")) continue;
        const colon = line.indexOf(":");
        const field = colon === -1 ? line : line.slice(0, colon);
        let value = colon === -1 ? "" : line.slice(colon + 1);
        if (value.startsWith(" ")) value = value.slice(1);
        if (field === "event") event.event = value;
        else if (field === "data") event.data.push(value);
        else if (field === "id") event.id = value;
      }
    }
  } finally {
    if (!finished) await reader.cancel().catch(() => {}); // the reader left early: close the stream
    reader.releaseLock();
  }
}
