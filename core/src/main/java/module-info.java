/**
 * htod core: block devices, the container layout, and the persistent heap allocator. The error
 * types and the device interface are the public API; the container, heap and storage layers are
 * machinery for the htod module and the tools built with it.
 */
// The qualified exports name modules built after this one, which javac reports as not found.
@SuppressWarnings("module")
module org.htod.core {
    requires jdk.unsupported; // com.sun.nio.file.ExtendedOpenOption.DIRECT, looked up by RawDevice at run time

    exports org.htod.core;
    exports org.htod.core.device;
    exports org.htod.core.container to org.htod;
    exports org.htod.core.alloc to org.htod;
    exports org.htod.core.storage to org.htod;
    exports org.htod.core.log to org.htod;
}
