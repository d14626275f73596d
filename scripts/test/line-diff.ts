/**
 * A unified diff of two texts, by lines, with `context` unchanged lines around each change.
 * Longest-common-subsequence based: fine for files of a few thousand lines.
 */
export function lineDiff(before: string, after: string, context = 3): string {
  const a = before.split("\n");
  const b = after.split("\n");
  // Common prefix and suffix are skipped, so the table only covers the changed middle.
  let start = 0;
  while (start < a.length && start < b.length && a[start] === b[start]) start++;
  let endA = a.length;
  let endB = b.length;
  while (endA > start && endB > start && a[endA - 1] === b[endB - 1]) {
    endA--;
    endB--;
  }
  const rows = endA - start;
  const cols = endB - start;
  const lcs = Array.from({ length: rows + 1 }, () => new Uint32Array(cols + 1));
  for (let i = rows - 1; i >= 0; i--) {
    for (let j = cols - 1; j >= 0; j--) {
      lcs[i]![j] =
        a[start + i] === b[start + j] ? lcs[i + 1]![j + 1]! + 1 : Math.max(lcs[i + 1]![j]!, lcs[i]![j + 1]!);
    }
  }
  type Line = { mark: " " | "-" | "+"; text: string; lineA: number; lineB: number };
  const lines: Line[] = [];
  for (let i = 0; i < start; i++) lines.push({ mark: " ", text: a[i]!, lineA: i, lineB: i });
  let i = 0;
  let j = 0;
  while (i < rows || j < cols) {
    if (i < rows && j < cols && a[start + i] === b[start + j]) {
      lines.push({ mark: " ", text: a[start + i]!, lineA: start + i, lineB: start + j });
      i++;
      j++;
    } else if (i < rows && (j === cols || lcs[i + 1]![j]! >= lcs[i]![j + 1]!)) {
      lines.push({ mark: "-", text: a[start + i]!, lineA: start + i, lineB: start + j });
      i++;
    } else {
      lines.push({ mark: "+", text: b[start + j]!, lineA: start + i, lineB: start + j });
      j++;
    }
  }
  for (let k = 0; k < a.length - endA; k++) {
    lines.push({ mark: " ", text: a[endA + k]!, lineA: endA + k, lineB: endB + k });
  }

  const changed = lines.flatMap((line, index) => (line.mark === " " ? [] : [index]));
  if (changed.length === 0) return "";
  const out: string[] = [];
  let hunkStart = -1;
  let hunkEnd = -1;
  const flush = () => {
    const hunk = lines.slice(hunkStart, hunkEnd + 1);
    out.push(`@@ -${hunk[0]!.lineA + 1} +${hunk[0]!.lineB + 1} @@`);
    for (const line of hunk) out.push(`${line.mark} ${line.text}`);
  };
  for (const index of changed) {
    const from = Math.max(0, index - context);
    if (hunkStart !== -1 && from > hunkEnd + 1) {
      flush();
      hunkStart = -1;
    }
    if (hunkStart === -1) hunkStart = from;
    hunkEnd = Math.min(lines.length - 1, index + context);
  }
  flush();
  return out.join("\n");
}
