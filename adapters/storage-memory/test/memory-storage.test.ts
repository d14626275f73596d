import { runStorageConformance } from "@pai/core/testing/conformance";
import { memoryStorage } from "@pai/storage-memory";

runStorageConformance({ name: "memory", create: () => memoryStorage() });
