import { runStorageConformance } from "@pai/core/testing";
import { memoryStorage } from "@pai/storage-memory";

runStorageConformance({ name: "memory", create: () => memoryStorage() });
