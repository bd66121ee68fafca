/** htod core: block devices, the container layout, and the persistent heap allocator. */
module org.htod.core {
    exports org.htod.core;
    exports org.htod.core.device;
    exports org.htod.core.container;
}
