/**
 * htod: a persistent hashtable on disk behind a {@code ConcurrentMap}. Exported: the API in
 * {@code org.htod}, and the publishing system built on it alone, the dependency graph in {@code
 * org.htod.odg} and the fragment caches in {@code org.htod.fragment}. The hashtable machinery in
 * {@code org.htod.table} is internal.
 */
// Micrometer's jar is an automatic module (micrometer.core), which -Xlint:all reports.
@SuppressWarnings("requires-automatic")
module org.htod {
    requires transitive org.htod.core;
    requires static com.fasterxml.jackson.databind;
    requires static micrometer.core;

    exports org.htod;
    exports org.htod.odg;
    exports org.htod.fragment;
}
