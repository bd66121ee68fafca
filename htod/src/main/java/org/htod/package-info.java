/**
 * htod's API: open a store with {@link org.htod.Htod#builder(java.nio.file.Path)}, get named
 * persistent maps from it with {@link org.htod.HtodStore#map}, each a {@link
 * java.util.concurrent.ConcurrentMap} over a hashtable on disk.
 *
 * <pre>{@code
 * try (HtodStore store = Htod.builder(Path.of("pages.htod")).durability(Durability.SYNC).open()) {
 *     HtodMap<String, String> pages = store.map("pages", Codec.string(), Codec.string());
 *     pages.put("/index.html", "<html>...</html>");
 * }
 * }</pre>
 */
package org.htod;
