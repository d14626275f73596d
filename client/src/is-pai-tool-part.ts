import { isNativeToolPart, type ProjectedPart, type ProjectedToolPart } from "@pai/core";

/** Narrows a projected message part to a native tool part carrying PAI's sidecars. */
export function isPaiToolPart(part: ProjectedPart): part is ProjectedToolPart {
  return isNativeToolPart(part);
}
