/**
 * htod: a persistent hashtable on disk behind a {@code ConcurrentMap}. Only {@code org.htod} is
 * exported; the hashtable machinery in {@code org.htod.table} is internal.
 */
module org.htod {
    requires transitive org.htod.core;
    requires static com.fasterxml.jackson.databind;

    exports org.htod;
}
