import { type ReactNode, useEffect, useState } from "react";

/** The part of an action's deadline a countdown needs (core's `ActionDeadline` has more). */
export type CountdownDeadline = { at: string; resolution: "cancel" | "fail" };

/** Whole seconds until `at` (0 once it passed), refreshed every second until then. */
function useSecondsLeft(at: string | undefined): number {
  const [now, setNow] = useState(() => Date.now());
  const target = at === undefined ? Number.NaN : Date.parse(at);
  const running = Number.isFinite(target) && target > now;
  useEffect(() => {
    if (!running) return;
    const timer = setInterval(() => setNow(Date.now()), 1_000);
    return () => clearInterval(timer);
  }, [running]);
  return Number.isFinite(target) ? Math.max(0, Math.ceil((target - now) / 1_000)) : 0;
}

function mmss(seconds: number): string {
  const minutes = Math.floor(seconds / 60);
  return `${String(minutes).padStart(2, "0")}:${String(seconds % 60).padStart(2, "0")}`;
}

/**
 * Time left to answer a pending action with a deadline; nothing without one. The ticking value
 * is a `<time>` with the role `timer`, which screen readers do not announce on every tick. Only
 * the change to "expired" is announced, through a polite status.
 */
export function DeadlineCountdown({ deadline }: { deadline: CountdownDeadline | null }): ReactNode {
  const left = useSecondsLeft(deadline?.at);
  if (!deadline) return null;
  const outcome = deadline.resolution === "fail" ? "fails" : "is cancelled";
  const expired = left === 0;
  return (
    <p className="deadline" data-testid="deadline" data-expired={expired || undefined}>
      {expired ? null : (
        <>
          <time
            role="timer"
            dateTime={deadline.at}
            title={new Date(deadline.at).toLocaleString()}
            data-testid="deadline-left"
          >
            {mmss(left)}
          </time>{" "}
          left to answer, then it {outcome}
        </>
      )}
      <span role="status" aria-live="polite">
        {expired ? "expired" : ""}
      </span>
    </p>
  );
}
