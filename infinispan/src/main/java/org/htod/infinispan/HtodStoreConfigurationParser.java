package org.htod.infinispan;

import static org.htod.infinispan.HtodStoreConfigurationParser.NAMESPACE;

import org.htod.Durability;
import org.htod.StorageMethod;
import org.infinispan.commons.configuration.io.ConfigurationReader;
import org.infinispan.configuration.cache.ConfigurationBuilder;
import org.infinispan.configuration.parsing.CacheParser;
import org.infinispan.configuration.parsing.ConfigurationBuilderHolder;
import org.infinispan.configuration.parsing.ConfigurationParser;
import org.infinispan.configuration.parsing.Namespace;
import org.infinispan.configuration.parsing.ParseUtils;

/**
 * Reads {@code <htod-store>} inside {@code <persistence>}: the attributes of {@link
 * HtodStoreConfiguration} by their names, and every attribute and child element common to
 * Infinispan stores (preload, shared, segmented, purge, write-behind, property). Registered in
 * {@code META-INF/services}, so that Infinispan finds it on the class path. The namespace carries
 * the version of this element's schema, 1.0; Infinispan accepts any from 1.0 up to its own.
 *
 * <pre>{@code
 * <persistence>
 *   <htod-store xmlns="urn:htod:infinispan:store:1.0" location="data" durability="SYNC" cache-size="67108864"/>
 * </persistence>
 * }</pre>
 */
@Namespace(root = "htod-store")
@Namespace(uri = NAMESPACE + "*", root = "htod-store", since = "1.0")
public class HtodStoreConfigurationParser implements ConfigurationParser {
    static final String NAMESPACE = "urn:htod:infinispan:store:";

    @Override
    public void readElement(ConfigurationReader reader, ConfigurationBuilderHolder holder) {
        if (!Element.HTOD_STORE.toString().equals(reader.getLocalName())) {
            throw ParseUtils.unexpectedElement(reader);
        }
        ConfigurationBuilder builder = holder.getCurrentConfigurationBuilder();
        parse(reader, builder.persistence().addStore(HtodStoreConfigurationBuilder.class));
    }

    private static void parse(ConfigurationReader reader, HtodStoreConfigurationBuilder store) {
        for (int i = 0; i < reader.getAttributeCount(); i++) {
            ParseUtils.requireNoNamespaceAttribute(reader, i);
            String value = reader.getAttributeValue(i);
            try {
                switch (reader.getAttributeName(i)) {
                    case "location" -> store.location(value);
                    case "durability" -> store.durability(Durability.valueOf(value));
                    case "sync-interval" -> store.syncInterval(Long.parseLong(value));
                    case "cache-size" -> store.cacheSize(Long.parseLong(value));
                    case "storage-method" -> store.storageMethod(StorageMethod.valueOf(value));
                    case "grain" -> store.grain(Integer.parseInt(value));
                    case "load-factor" -> store.loadFactor(Double.parseDouble(value));
                    case "direct-mode" -> store.directMode(parseBoolean(value));
                    case "log-size" -> store.logSize(Long.parseLong(value));
                    case "buffer-size" -> store.bufferSize(Long.parseLong(value));
                    default -> CacheParser.parseStoreAttribute(reader, i, store);
                }
            } catch (IllegalArgumentException e) { // NumberFormatException too: a value of the wrong form
                throw ParseUtils.invalidAttributeValue(reader, i);
            }
        }
        while (reader.inTag()) {
            CacheParser.parseStoreElement(reader, store);
        }
    }

    /** "true" or "false", nothing else: Boolean.parseBoolean would read a typo as false. */
    private static boolean parseBoolean(String value) {
        return switch (value) {
            case "true" -> true;
            case "false" -> false;
            default -> throw new IllegalArgumentException("not a boolean: " + value);
        };
    }

    @Override
    public Namespace[] getNamespaces() {
        return ParseUtils.getNamespaceAnnotations(getClass());
    }
}
