// The text the user last selected inside the conversation. Typing a message moves the focus
// (and the document selection) into the composer, so the selection is remembered here.
let remembered = "";

const FORM_CONTROLS = new Set(["INPUT", "TEXTAREA", "SELECT"]);

/** Conversation text only: not text typed or selected inside a form field. */
function isInConversation(node: Node | null): boolean {
  if (document.activeElement && FORM_CONTROLS.has(document.activeElement.tagName)) return false;
  const element = node instanceof Element ? node : (node?.parentElement ?? null);
  return element?.closest("[data-selectable]") != null && element.closest("form") === null;
}

/** Starts remembering selections made inside elements marked `data-selectable`. */
export function trackSelection(): () => void {
  const onChange = () => {
    const selection = document.getSelection();
    const text = selection?.toString().trim() ?? "";
    if (text && isInConversation(selection?.anchorNode ?? null)) remembered = text.slice(0, 2_000);
  };
  document.addEventListener("selectionchange", onChange);
  return () => document.removeEventListener("selectionchange", onChange);
}

/** The remembered selection, consumed once so a later question does not reuse it by surprise. */
export function lastSelection(): string {
  const text = remembered;
  remembered = "";
  return text;
}
