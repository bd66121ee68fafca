/**
 * htod core: block devices, the container layout, and the persistent heap allocator. The error
 * types and the device interface are the public API; the container, heap and storage layers are
 * machinery for the htod module and the tools built with it.
 */
// The qualified exports name modules built after this one, which javac reports as not found.
@SuppressWarnings("module")
module org.htod.core {
    // com.sun.nio.file.ExtendedOpenOption.DIRECT (RawDevice) and sun.misc.Unsafe.invokeCleaner
    // (MappedReads), both looked up at run time
    requires jdk.unsupported;
    requires jdk.management; // the machine's memory, which bounds the files MappedReads maps

    exports org.htod.core;
    exports org.htod.core.device;
    exports org.htod.core.container to org.htod;
    exports org.htod.core.alloc to org.htod;
    exports org.htod.core.storage to org.htod;
    exports org.htod.core.log to org.htod;
}
