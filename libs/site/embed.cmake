# Writes file IN as a C++ raw string literal into OUT (delimiter DELIM).
file(READ ${IN} CONTENT)
if(NOT DEFINED DELIM)
  set(DELIM folio_css)
endif()
file(WRITE ${OUT} "R\"${DELIM}(${CONTENT})${DELIM}\"")
