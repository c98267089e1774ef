package dev.idem.okhttp.internal;

import dev.idem.okhttp.IdempotencyResult;
import dev.idem.okhttp.IdempotentOperation;
import kotlin.jvm.JvmClassMappingKt;
import kotlin.reflect.KClass;

/**
 * The keys of the request tags the adapter reads and sets on every call, made once. OkHttp keys
 * tags by {@link KClass}, and its {@code tag(Class)} methods wrap the class in a new one on every
 * call (a lookup or a set); these are equal to those wrappers, so a tag set either way is found
 * either way. Stateless.
 */
final class Tags {
  static final KClass<ResumeAttempt> RESUME_ATTEMPT = JvmClassMappingKt.getKotlinClass(ResumeAttempt.class);
  static final KClass<IdempotentOperation> OPERATION = JvmClassMappingKt.getKotlinClass(IdempotentOperation.class);
  static final KClass<CallResult> CALL_RESULT = JvmClassMappingKt.getKotlinClass(CallResult.class);
  static final KClass<KeyedAttempt> KEYED_ATTEMPT = JvmClassMappingKt.getKotlinClass(KeyedAttempt.class);
  static final KClass<IdempotencyResult> RESULT = JvmClassMappingKt.getKotlinClass(IdempotencyResult.class);
  /** A call's tag (not a request's): the call's {@link HeadFirstWatch}, one of its listeners. */
  static final KClass<HeadFirstWatch> HEAD_FIRST_WATCH = JvmClassMappingKt.getKotlinClass(HeadFirstWatch.class);

  private Tags() {}
}
