# Compiles a file of FOLDER/ that includes HEADER, with FOLDER's include root (the one its
# library builds with), and checks the result is EXPECT (pass or fail): the library graph, not
# a convention, decides which headers a folder can include.
#   cmake -DCC=... -DROOTS=... -DFOLDER=sandbox -DHEADER=policy/lua_host.h -DEXPECT=fail -DOUT=... -P
file(MAKE_DIRECTORY ${OUT})
file(WRITE ${OUT}/probe_${FOLDER}.c "#include \"${HEADER}\"\n")
execute_process(COMMAND ${CC} -fsyntax-only -D_GNU_SOURCE -I${ROOTS}/${FOLDER} ${OUT}/probe_${FOLDER}.c
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(rc EQUAL 0)
  set(got pass)
else()
  set(got fail)
endif()
if(NOT got STREQUAL EXPECT)
  message(FATAL_ERROR "${FOLDER}/ including ${HEADER}: expected ${EXPECT}, got ${got}\n${err}")
endif()
if(got STREQUAL fail AND NOT err MATCHES "No such file")
  message(FATAL_ERROR "${FOLDER}/ including ${HEADER} failed for another reason:\n${err}")
endif()
message(STATUS "${FOLDER}/ including ${HEADER}: ${got}, as expected")
