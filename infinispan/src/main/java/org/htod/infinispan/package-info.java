/**
 * htod as Infinispan's per-node persistent store: {@link org.htod.infinispan.HtodNonBlockingStore}
 * implements {@code NonBlockingStore}; configure it with {@code
 * persistence().addStore(HtodStoreConfigurationBuilder.class)} or {@code <htod-store>} in XML.
 */
package org.htod.infinispan;
