/* attrs.h — compiler attributes, wrapped once. Owns nothing else. */
#ifndef CORDON_ATTRS_H
#define CORDON_ATTRS_H
#define CORDON_NORETURN __attribute__((noreturn))
#define CORDON_PRINTF(fmt, args) __attribute__((format(printf, fmt, args)))
#define CORDON_UNUSED __attribute__((unused))
#define CORDON_WARN_UNUSED __attribute__((warn_unused_result))
#endif
