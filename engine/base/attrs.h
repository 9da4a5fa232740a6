/* attrs.h — compiler attributes, wrapped once. Owns nothing else. */
#ifndef CORDON_ATTRS_H
#define CORDON_ATTRS_H
#define CORDON_NORETURN __attribute__((noreturn))
#define CORDON_PRINTF(fmt, args) __attribute__((format(printf, fmt, args)))
#endif
